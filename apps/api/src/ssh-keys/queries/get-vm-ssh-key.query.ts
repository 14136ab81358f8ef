import { Query } from '@nestjs/cqrs';
import type { VmSshKeyResponseDto } from '@arbor/contracts';

/** GET /vm/{id}/ssh_key: the private half of the VM's own key pair. */
export class GetVmSshKeyQuery extends Query<VmSshKeyResponseDto> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
  ) {
    super();
  }
}
