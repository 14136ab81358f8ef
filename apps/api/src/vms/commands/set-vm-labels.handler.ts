import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Operations } from '@arbor/application';
import { Vm } from '@arbor/domain';
import { VmReadModel } from '../vm-read-model';
import { SetVmLabelsCommand } from './set-vm-labels.command';

@CommandHandler(SetVmLabelsCommand)
export class SetVmLabelsHandler implements ICommandHandler<SetVmLabelsCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, labels }: SetVmLabelsCommand): Promise<void> {
    await this.vms.get(context.principal.org_id, vm_id);
    await this.operations.run(Vm, vm_id, { type: 'SetVmLabels', labels }, context.command);
  }
}
