import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Operations } from '@arbor/application';
import { Vm } from '@arbor/domain';
import { VmReadModel } from '../vm-read-model';
import { ChangeVmStateCommand } from './change-vm-state.command';

@CommandHandler(ChangeVmStateCommand)
export class ChangeVmStateHandler implements ICommandHandler<ChangeVmStateCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, target, skipWaitBoot }: ChangeVmStateCommand): Promise<void> {
    await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    await this.operations.run(Vm, vm_id, { type: 'RequestVmStateChange', target }, context.command);
  }
}
