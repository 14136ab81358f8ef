import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { deterministicUuid } from '@arbor/domain';
import { VmCommitter } from '../vm-committer';
import { CommitVmCommand } from './commit-vm.command';

const blankToNull = (value: string | null | undefined) => (value && value.trim() ? value.trim() : null);

@CommandHandler(CommitVmCommand)
export class CommitVmHandler implements ICommandHandler<CommitVmCommand> {
  constructor(private readonly committer: VmCommitter) {}

  async execute({ context, vm_id, request, keepPaused, skipWaitBoot }: CommitVmCommand): Promise<{ commit_id: string }> {
    const commit_id = request.commit_id?.toLowerCase() ?? deterministicUuid(context.command.command_id, 'commit');
    const commit = {
      commit_id,
      name: blankToNull(request.name) ?? `commit-${commit_id.slice(0, 8)}`,
      description: blankToNull(request.description),
      keep_paused: keepPaused,
      chosen_by_client: Boolean(request.commit_id),
    };
    await this.committer.commit(context.principal.org_id, vm_id, commit, skipWaitBoot, context.command);
    return { commit_id };
  }
}
