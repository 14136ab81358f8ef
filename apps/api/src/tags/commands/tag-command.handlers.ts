import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { deterministicUuid, streams, tagDecider, type TagCommand } from '@arbor/domain';
import type { CreateCommitTagResponseDto } from '@arbor/contracts';
import { handleCommand, type CommandContext, ProjectionWaiter } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { CommitReadModel } from '../../commits/commit-read-model';
import { requireTagName } from '../tag-name.pipe';
import { CreateTagCommand, DeleteTagCommand, UpdateTagCommand } from './tag-commands';

/** Runs a tag command on its stream (the name's reservation) and waits for the read model. */
abstract class TagCommandHandler {
  constructor(
    @Inject(EVENT_STORE) protected readonly events: EventStore,
    protected readonly projection: ProjectionWaiter,
    protected readonly commits: CommitReadModel,
  ) {}

  protected async run(org_id: string, tag_name: string, command: TagCommand, context: CommandContext): Promise<void> {
    const result = await handleCommand(this.events, streams.tag(org_id, tag_name), tagDecider, command, context);
    await this.projection.waitFor(result.position);
  }
}

@CommandHandler(CreateTagCommand)
export class CreateTagHandler extends TagCommandHandler implements ICommandHandler<CreateTagCommand> {
  async execute({ context, tag_name, commit_id, description }: CreateTagCommand): Promise<CreateCommitTagResponseDto> {
    const org_id = context.principal.org_id;
    // The name first: it names the stream, and a bad name is the client's error whatever the commit.
    requireTagName(tag_name);
    await this.commits.getReadable(org_id, commit_id);
    const tag_id = deterministicUuid(context.command.command_id, 'tag');
    await this.run(org_id, tag_name, { type: 'CreateTag', tag_id, org_id, tag_name, commit_id, description, now: new Date().toISOString() }, context.command);
    return { tag_id, tag_name, commit_id };
  }
}

@CommandHandler(UpdateTagCommand)
export class UpdateTagHandler extends TagCommandHandler implements ICommandHandler<UpdateTagCommand> {
  async execute({ context, tag_name, commit_id, description }: UpdateTagCommand): Promise<void> {
    const org_id = context.principal.org_id;
    if (commit_id) await this.commits.getReadable(org_id, commit_id);
    await this.run(org_id, tag_name, { type: 'UpdateTag', commit_id, description, now: new Date().toISOString() }, context.command);
  }
}

@CommandHandler(DeleteTagCommand)
export class DeleteTagHandler extends TagCommandHandler implements ICommandHandler<DeleteTagCommand> {
  async execute({ context, tag_name }: DeleteTagCommand): Promise<void> {
    await this.run(context.principal.org_id, tag_name, { type: 'DeleteTag', now: new Date().toISOString() }, context.command);
  }
}
