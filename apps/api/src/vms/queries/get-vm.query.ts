import { Query } from '@nestjs/cqrs';
import type { VmDto, VmMetadataResponseDto } from '@arbor/contracts';
import type { AsOf } from '../../time-travel/as-of';

/** GET /vm/{id}/status: the VM as listed (as of a log position or time with `as_of`). */
export class GetVmStatusQuery extends Query<VmDto> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
    readonly as_of?: AsOf,
  ) {
    super();
  }
}

/** GET /vm/{id}/metadata: addressing and lineage, also for deleted VMs. */
export class GetVmMetadataQuery extends Query<VmMetadataResponseDto> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
    readonly as_of?: AsOf,
  ) {
    super();
  }
}
