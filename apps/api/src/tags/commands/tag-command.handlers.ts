import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Operations, stepContext, TagHolds, type TagRef } from '@arbor/application';
import type { CreateCommitTagResponseDto } from '@arbor/contracts';
import { deterministicUuid, Tag } from '@arbor/domain';
import { CommitReadModel } from '../../commits/commit-read-model';
import { requireTagName } from '../tag-name.pipe';
import { CreateTagCommand, DeleteTagCommand, UpdateTagCommand } from './tag-commands';

/** How a commit tag holds the commit it points at (see TagHolds). */
const tagRef = (org_id: string, tag_name: string, tag_id: string): TagRef => ({ tag_id, label: `tag ${tag_name}`, stream: Tag.stream({ org_id, tag_name }), org_id });

@CommandHandler(CreateTagCommand)
export class CreateTagHandler implements ICommandHandler<CreateTagCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly holds: TagHolds,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, tag_name, commit_id: named, description }: CreateTagCommand): Promise<CreateCommitTagResponseDto> {
    const org_id = context.principal.org_id;
    // The name first: it names the stream, and a bad name is the client's error whatever the commit.
    requireTagName(tag_name);
    // The tag holds the commit's id in the log; the answer names it as the client did.
    const { _id: commit_id } = await this.commits.getReadable(org_id, named);
    const tag_id = deterministicUuid(context.command.command_id, 'tag');
    const command = { type: 'CreateTag' as const, tag_id, org_id, tag_name, commit_id, description, now: new Date().toISOString() };
    const tag = { org_id, tag_name };
    await this.holds.pointAt(
      commit_id,
      tagRef(org_id, tag_name, tag_id),
      context.command,
      () => this.operations.run(Tag, tag, command, context.command),
      () => this.aggregates.check(Tag, tag, command, context.command),
    );
    return { tag_id, tag_name, commit_id: named };
  }
}

@CommandHandler(UpdateTagCommand)
export class UpdateTagHandler implements ICommandHandler<UpdateTagCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly holds: TagHolds,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, tag_name, commit_id: named, description }: UpdateTagCommand): Promise<void> {
    const org_id = context.principal.org_id;
    const commit_id = named ? (await this.commits.getReadable(org_id, named))._id : named;
    const command = { type: 'UpdateTag' as const, commit_id, description, now: new Date().toISOString() };
    const update = () => this.operations.run(Tag, { org_id, tag_name }, command, context.command);
    const { state } = await this.aggregates.load(Tag, { org_id, tag_name });
    if (!commit_id || !state.exists || state.commit_id === commit_id) {
      await update();
      return;
    }
    // Moved: the new commit is held first, the one it left is let go of after.
    const check = () => this.aggregates.check(Tag, { org_id, tag_name }, command, context.command);
    const moved = await this.holds.pointAt(commit_id, tagRef(org_id, tag_name, state.tag_id!), context.command, update, check);
    for (const event of moved.events) {
      if (event.type === 'TagMoved') await this.holds.release(event.data.previous_commit_id, event.data.tag_id, stepContext(context.command, 'release', event.data.tag_id));
    }
  }
}

@CommandHandler(DeleteTagCommand)
export class DeleteTagHandler implements ICommandHandler<DeleteTagCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly holds: TagHolds,
  ) {}

  async execute({ context, tag_name }: DeleteTagCommand): Promise<void> {
    const tag = { org_id: context.principal.org_id, tag_name };
    const { state } = await this.aggregates.load(Tag, tag);
    const deleted = await this.operations.run(Tag, tag, { type: 'DeleteTag', now: new Date().toISOString() }, context.command);
    if (deleted.events.length && state.commit_id) await this.holds.release(state.commit_id, state.tag_id!, stepContext(context.command, 'release', state.tag_id!));
  }
}
