import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { deterministicUuid, orgCommitId } from '@arbor/domain';
import { VmCommitter } from '../vm-committer';
import { CommitVmCommand } from './commit-vm.command';

const blankToNull = (value: string | null | undefined) => (value && value.trim() ? value.trim() : null);

@CommandHandler(CommitVmCommand)
export class CommitVmHandler implements ICommandHandler<CommitVmCommand> {
  constructor(private readonly committer: VmCommitter) {}

  /** Answers the commit's id as the org sees it: the chosen one, else the one made for it. */
  async execute({ context, vm_id, request, keepPaused, skipWaitBoot }: CommitVmCommand): Promise<{ commit_id: string }> {
    const org_id = context.principal.org_id;
    const chosen_id = request.commit_id?.toLowerCase() ?? null;
    // A chosen id is the org's name: the commit's id in the log is derived from the org and it.
    const commit_id = chosen_id === null ? deterministicUuid(context.command.command_id, 'commit') : orgCommitId(org_id, chosen_id);
    const shown = chosen_id ?? commit_id;
    const commit = {
      commit_id,
      chosen_id,
      name: blankToNull(request.name) ?? `commit-${shown.slice(0, 8)}`,
      description: blankToNull(request.description),
      keep_paused: keepPaused,
    };
    await this.committer.commit(org_id, vm_id, commit, skipWaitBoot, context.command);
    return { commit_id: shown };
  }
}
