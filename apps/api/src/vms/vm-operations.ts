import { Inject, Injectable } from '@nestjs/common';
import { streams, vmDecider, type VmCommand } from '../../../../libs/domain/src';
import { handleCommand } from '../../../../libs/application/src/aggregate-repository';
import type { ArborConfig } from '../../../../libs/application/src/arbor-config';
import type { CommandContext } from '../../../../libs/application/src/command-context';
import { ARBOR_CONFIG } from '../../../../libs/application/src/infrastructure';
import { ProjectionWaiter } from '../../../../libs/application/src/projection-waiter';
import { EVENT_STORE, type EventStore } from '../../../../libs/event-store/src/event-store.port';
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
