import { Query } from '@nestjs/cqrs';
import type { VmDto, VmMetadataResponseDto } from '@arbor/contracts';

/** GET /vm/{id}/status: the VM as listed. */
export class GetVmStatusQuery extends Query<VmDto> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
  ) {
    super();
  }
}

/** GET /vm/{id}/metadata: addressing and lineage, also for deleted VMs. */
export class GetVmMetadataQuery extends Query<VmMetadataResponseDto> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
  ) {
    super();
  }
}
