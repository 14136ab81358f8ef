import { Query } from '@nestjs/cqrs';
import type { VmDto } from '@arbor/contracts';

/** GET /vms: the org's live VMs, oldest first. */
export class ListVmsQuery extends Query<VmDto[]> {
  constructor(readonly org_id: string) {
    super();
  }
}
