import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { deterministicUuid } from '@arbor/domain';
import { CommitIdReservation } from '../commit-id-reservation';
import { VmOperations } from '../vm-operations';
import { VmReadModel } from '../vm-read-model';
import { CommitVmCommand } from './commit-vm.command';

const blankToNull = (value: string | null | undefined) => (value && value.trim() ? value.trim() : null);

@CommandHandler(CommitVmCommand)
export class CommitVmHandler implements ICommandHandler<CommitVmCommand> {
  constructor(
    private readonly operations: VmOperations,
    private readonly vms: VmReadModel,
    private readonly commitIds: CommitIdReservation,
  ) {}

  async execute({ context, vm_id, request, keepPaused, skipWaitBoot }: CommitVmCommand): Promise<{ commit_id: string }> {
    await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    const commit_id = request.commit_id?.toLowerCase() ?? deterministicUuid(context.command.command_id, 'commit');
    // A generated id is this request's own; a chosen one may be anybody's: 409 unless this VM holds it.
    if (request.commit_id) await this.commitIds.reserve(commit_id, vm_id, context.command);
    const name = blankToNull(request.name) ?? `commit-${commit_id.slice(0, 8)}`;
    await this.operations.run(
      vm_id,
      { type: 'RequestVmCommit', commit_id, name, description: blankToNull(request.description), keep_paused: keepPaused },
      context.command,
      'VmCommitted',
    );
    return { commit_id };
  }
}
