import { Inject, Injectable } from '@nestjs/common';
import { streams, vmDecider, type VmCommand } from '@arbor/domain';
import { handleCommand, type ArborConfig, type CommandContext, ARBOR_CONFIG, ProjectionWaiter } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { awaitVmOutcome } from './commands/vm-outcome';

/**
 * Runs a VM command that asks the worker for work, and answers once the work is done and
 * visible: append the intent, wait for the worker's outcome event (a failure becomes an error
 * carrying the worker's reason), then wait for the read models (read-your-writes).
 * Returns false when the decider found nothing to do (e.g. pausing a paused VM).
 */
@Injectable()
export class VmOperations {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
    private readonly projection: ProjectionWaiter,
  ) {}

  async run(vm_id: string, command: VmCommand, context: CommandContext, successType: string): Promise<boolean> {
    const result = await handleCommand(this.events, streams.vm(vm_id), vmDecider, command, context);
    if (result.event_ids.length === 0) return false;
    const position = await awaitVmOutcome(this.events, vm_id, result.revision, result.event_ids[0], successType, this.config.waitTimeoutMs);
    await this.projection.waitFor(position);
    return true;
  }
}
