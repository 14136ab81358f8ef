import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { VmOperations } from '../vm-operations';
import { VmReadModel } from '../vm-read-model';
import { ChangeVmStateCommand } from './change-vm-state.command';

@CommandHandler(ChangeVmStateCommand)
export class ChangeVmStateHandler implements ICommandHandler<ChangeVmStateCommand> {
  constructor(
    private readonly operations: VmOperations,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, target, skipWaitBoot }: ChangeVmStateCommand): Promise<void> {
    await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    await this.operations.run(vm_id, { type: 'RequestVmStateChange', target }, context.command, target === 'Paused' ? 'VmPaused' : 'VmResumed');
  }
}
