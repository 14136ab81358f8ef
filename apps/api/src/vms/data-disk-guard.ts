import { Injectable } from '@nestjs/common';
import { DataDiskFloor } from '@arbor/application';
import { HttpError } from '../http/http-error';

/**
 * New VMs, branches and commits need room on the data disk: below its free-space floor
 * (ARBOR_DATA_DISK_FLOOR_MIB) they are refused with 507 Insufficient Storage, before anything is
 * appended. 507, not 503: the service is up (reads, deletes, execs go on, and deletes free space);
 * what is missing is storage the operator must provide.
 */
@Injectable()
export class DataDiskGuard {
  constructor(private readonly floor: DataDiskFloor) {}

  async requireRoom(): Promise<void> {
    const shortfall = await this.floor.check();
    if (shortfall) throw new HttpError(507, shortfall.message);
  }
}
