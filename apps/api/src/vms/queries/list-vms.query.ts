import { Query } from '@nestjs/cqrs';
import type { VmDto } from '@arbor/contracts';
import type { AsOf } from '../../time-travel/as-of';

/** GET /vms: the org's live VMs, oldest first (as of a log position or time with `as_of`). */
export class ListVmsQuery extends Query<VmDto[]> {
  constructor(
    readonly org_id: string,
    readonly as_of?: AsOf,
  ) {
    super();
  }
}
