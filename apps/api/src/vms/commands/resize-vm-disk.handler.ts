import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Operations } from '@arbor/application';
import { Vm } from '@arbor/domain';
import { VmReadModel } from '../vm-read-model';
import { ResizeVmDiskCommand } from './resize-vm-disk.command';

@CommandHandler(ResizeVmDiskCommand)
export class ResizeVmDiskHandler implements ICommandHandler<ResizeVmDiskCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, fs_size_mib, skipWaitBoot }: ResizeVmDiskCommand): Promise<void> {
    await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    await this.operations.run(Vm, vm_id, { type: 'RequestVmDiskResize', fs_size_mib }, context.command);
  }
}
