import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { commitDecider, streams } from '@arbor/domain';
import type { CommitInfoDto } from '@arbor/contracts';
import { handleCommand, ProjectionWaiter } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { presentCommit } from '../commit-presenter';
import { CommitReadModel } from '../commit-read-model';
import { DeleteCommitCommand, UpdateCommitCommand } from './update-commit.command';

@CommandHandler(UpdateCommitCommand)
export class UpdateCommitHandler implements ICommandHandler<UpdateCommitCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly projection: ProjectionWaiter,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, commit_id, is_public, name, description }: UpdateCommitCommand): Promise<CommitInfoDto> {
    const org_id = context.principal.org_id;
    await this.commits.getOwn(org_id, commit_id);
    const result = await handleCommand(this.events, streams.commit(commit_id), commitDecider, { type: 'UpdateCommit', is_public, name, description }, context.command);
    await this.projection.waitFor(result.position);
    return presentCommit(await this.commits.getOwn(org_id, commit_id));
  }
}

@CommandHandler(DeleteCommitCommand)
export class DeleteCommitHandler implements ICommandHandler<DeleteCommitCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly projection: ProjectionWaiter,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, commit_id }: DeleteCommitCommand): Promise<void> {
    await this.commits.getOwn(context.principal.org_id, commit_id);
    // The decider refuses while VMs started from the commit exist ("commit still has N active
    // VM(s)"), counted on the commit's own stream, where every restore records its use first.
    const result = await handleCommand(this.events, streams.commit(commit_id), commitDecider, { type: 'DeleteCommit', now: new Date().toISOString() }, context.command);
    await this.projection.waitFor(result.position);
  }
}
