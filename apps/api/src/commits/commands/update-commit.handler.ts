import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Operations, stepContext, TagHolds } from '@arbor/application';
import type { CommitInfoDto } from '@arbor/contracts';
import { Commit } from '@arbor/domain';
import { CommitNames } from '../commit-names';
import { commitIdsOf, presentCommit } from '../commit-presenter';
import { CommitReadModel } from '../commit-read-model';
import { DeleteCommitCommand, UpdateCommitCommand } from './update-commit.command';

@CommandHandler(UpdateCommitCommand)
export class UpdateCommitHandler implements ICommandHandler<UpdateCommitCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly commits: CommitReadModel,
    private readonly names: CommitNames,
  ) {}

  async execute({ context, commit_id, is_public, name, description }: UpdateCommitCommand): Promise<CommitInfoDto> {
    const org_id = context.principal.org_id;
    // The id is the org's name for the commit; the log knows it by its own id.
    const { _id } = await this.commits.getOwn(org_id, commit_id);
    await this.operations.run(Commit, _id, { type: 'UpdateCommit', is_public, name, description }, context.command);
    const updated = await this.commits.getOwn(org_id, commit_id);
    return presentCommit(updated, await this.names.namingFor(org_id, commitIdsOf([updated])));
  }
}

@CommandHandler(DeleteCommitCommand)
export class DeleteCommitHandler implements ICommandHandler<DeleteCommitCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly holds: TagHolds,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, commit_id: named }: DeleteCommitCommand): Promise<void> {
    const { _id: commit_id } = await this.commits.getOwn(context.principal.org_id, named);
    await this.holds.releaseStale(commit_id, stepContext(context.command, 'stale-holds'));
    // The decider refuses while VMs started from the commit exist ("commit still has N active
    // VM(s)") or tags point at it ("commit is still tagged: …"), as its own stream counts them:
    // every restore records its use there first, every tag its hold.
    await this.operations.run(Commit, commit_id, { type: 'DeleteCommit', now: new Date().toISOString() }, context.command);
  }
}
