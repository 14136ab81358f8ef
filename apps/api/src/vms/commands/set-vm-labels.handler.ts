import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { streams, vmDecider } from '@arbor/domain';
import { handleCommand, ProjectionWaiter } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { VmReadModel } from '../vm-read-model';
import { SetVmLabelsCommand } from './set-vm-labels.command';

@CommandHandler(SetVmLabelsCommand)
export class SetVmLabelsHandler implements ICommandHandler<SetVmLabelsCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly projection: ProjectionWaiter,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, labels }: SetVmLabelsCommand): Promise<void> {
    await this.vms.get(context.principal.org_id, vm_id);
    const result = await handleCommand(this.events, streams.vm(vm_id), vmDecider, { type: 'SetVmLabels', labels }, context.command);
    await this.projection.waitFor(result.position);
  }
}
