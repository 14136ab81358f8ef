import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { VmSshKeys } from '@arbor/application';
import type { VmSshKeyResponseDto } from '@arbor/contracts';
import { VmReadModel } from '../../vms/vm-read-model';
import { GetVmSshKeyQuery } from './get-vm-ssh-key.query';

/** SSH inside the guest listens on port 22 (clients reach it through the TLS edge). */
const GUEST_SSH_PORT = 22;

@QueryHandler(GetVmSshKeyQuery)
export class GetVmSshKeyHandler implements IQueryHandler<GetVmSshKeyQuery> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly keys: VmSshKeys,
  ) {}

  async execute({ org_id, vm_id }: GetVmSshKeyQuery): Promise<VmSshKeyResponseDto> {
    // As the contract's node does: a paused (or dead) VM is refused (409); a booting one is waited for.
    await this.vms.requireRunning(org_id, vm_id);
    return { ssh_private_key: this.keys.privateKeyOpenSsh(vm_id), ssh_port: GUEST_SSH_PORT };
  }
}
