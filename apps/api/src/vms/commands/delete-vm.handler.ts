import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { DomainError, streams, vmDecider } from '@arbor/domain';
import { commandAppended, handleCommand, awaitStreamEvent, ProjectionWaiter, ARBOR_CONFIG, type ArborConfig } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { HttpError } from '../../http/http-error';
import { VmReadModel } from '../vm-read-model';
import { DeleteVmCommand } from './delete-vm.command';

@CommandHandler(DeleteVmCommand)
export class DeleteVmHandler implements ICommandHandler<DeleteVmCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
    private readonly projection: ProjectionWaiter,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, skipWaitBoot }: DeleteVmCommand): Promise<{ vm_id: string }> {
    try {
      await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'not_found')) throw error;
      // A retry (same X-Idempotency-Key) of a deletion that finished after its first attempt
      // timed out answers as the first would have; anything else gone or foreign is 403 Forbidden,
      // as the contract's server answers.
      if (!(await commandAppended(this.events, streams.vm(vm_id), context.command.command_id))) throw new HttpError(403, 'Forbidden');
    }
    const result = await handleCommand(this.events, streams.vm(vm_id), vmDecider, { type: 'RequestVmDeletion' }, context.command);
    // Wait for the machine to be gone, whether this request or an earlier one asked for it.
    const outcome = await awaitStreamEvent(
      this.events,
      streams.vm(vm_id),
      result.revision - result.event_ids.length,
      (event) => event.type === 'VmDeleted' || (event.type === 'VmOperationFailed' && (event.data as { operation: string }).operation === 'delete'),
      `the worker to destroy vm ${vm_id}`,
      this.config.waitTimeoutMs,
    );
    if (outcome.type !== 'VmDeleted') throw new HttpError(500, (outcome.data as { reason: string }).reason);
    await this.projection.waitFor(outcome.position);
    return { vm_id };
  }
}
