import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { SshKeyGenerationRetired, VmSshKeys } from '@arbor/application';
import type { VmSshKeyResponseDto } from '@arbor/contracts';
import { HttpError } from '../../http/http-error';
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
    const vm = await this.vms.requireRunning(org_id, vm_id);
    try {
      // The generation the VM was made (or last re-keyed) with: a rotation since changes nothing here.
      return { ssh_private_key: await this.keys.privateKeyOpenSsh(vm_id, vm.ssh_key_generation ?? 1), ssh_port: GUEST_SSH_PORT };
    } catch (error) {
      if (!(error instanceof SshKeyGenerationRetired)) throw error;
      throw new HttpError(409, `the SSH key of vm ${vm_id} came from key generation ${error.generation}, which the operator retired; the VM must be re-keyed`);
    }
  }
}
