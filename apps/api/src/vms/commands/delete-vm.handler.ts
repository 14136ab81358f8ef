import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Operations } from '@arbor/application';
import { DomainReadModel } from '../../domains/domain-read-model';
import { DomainError, Vm } from '@arbor/domain';
import { HttpError } from '../../http/http-error';
import { VmReadModel } from '../vm-read-model';
import { DeleteVmCommand } from './delete-vm.command';

@CommandHandler(DeleteVmCommand)
export class DeleteVmHandler implements ICommandHandler<DeleteVmCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
    private readonly domains: DomainReadModel,
  ) {}

  async execute({ context, vm_id, skipWaitBoot }: DeleteVmCommand): Promise<{ vm_id: string }> {
    try {
      await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'not_found')) throw error;
      // A retry (same X-Idempotency-Key) of a deletion that finished after its first attempt
      // timed out answers as the first would have; anything else gone or foreign is 403 Forbidden,
      // as the contract's server answers.
      if (!(await this.aggregates.appended(Vm, vm_id, context.command.command_id))) throw new HttpError(403, 'Forbidden');
    }
    const result = await this.aggregates.handle(Vm, vm_id, { type: 'RequestVmDeletion' }, context.command);
    // Wait for the machine to be gone, whether this request or an earlier one asked for it.
    await this.operations.settle(Vm, vm_id, 'VmDeletionRequested', result.revision - result.event_ids.length);
    // Its domains go with it (the worker frees them on VmDeleted): once answered, they are free.
    await this.domains.waitUntilNoneOf(context.principal.org_id, vm_id);
    return { vm_id };
  }
}
