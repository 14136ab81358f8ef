import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { streams, vmDecider } from '../../../../../libs/domain/src';
import { handleCommand } from '../../../../../libs/application/src/aggregate-repository';
import { ProjectionWaiter } from '../../../../../libs/application/src/projection-waiter';
import { ARBOR_CONFIG } from '../../../../../libs/application/src/infrastructure';
import type { ArborConfig } from '../../../../../libs/application/src/arbor-config';
import { EVENT_STORE, type EventStore } from '../../../../../libs/event-store/src/event-store.port';
import { VmReadModel } from '../vm-read-model';
import { ChangeVmStateCommand } from './change-vm-state.command';
import { awaitVmOutcome } from './vm-outcome';

@CommandHandler(ChangeVmStateCommand)
export class ChangeVmStateHandler implements ICommandHandler<ChangeVmStateCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
    private readonly projection: ProjectionWaiter,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, target, skipWaitBoot }: ChangeVmStateCommand): Promise<void> {
    await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    const result = await handleCommand(this.events, streams.vm(vm_id), vmDecider, { type: 'RequestVmStateChange', target }, context.command);
    if (result.event_ids.length === 0) return; // already in that state
    const position = await awaitVmOutcome(
      this.events,
      vm_id,
      result.revision,
      result.event_ids[0],
      target === 'Paused' ? 'VmPaused' : 'VmResumed',
      this.config.waitTimeoutMs,
    );
    await this.projection.waitFor(position);
  }
}
