import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Operations } from '@arbor/application';
import type { CreateCommitTagResponseDto } from '@arbor/contracts';
import { deterministicUuid, Tag } from '@arbor/domain';
import { CommitReadModel } from '../../commits/commit-read-model';
import { requireTagName } from '../tag-name.pipe';
import { CreateTagCommand, DeleteTagCommand, UpdateTagCommand } from './tag-commands';

@CommandHandler(CreateTagCommand)
export class CreateTagHandler implements ICommandHandler<CreateTagCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, tag_name, commit_id, description }: CreateTagCommand): Promise<CreateCommitTagResponseDto> {
    const org_id = context.principal.org_id;
    // The name first: it names the stream, and a bad name is the client's error whatever the commit.
    requireTagName(tag_name);
    await this.commits.getReadable(org_id, commit_id);
    const tag_id = deterministicUuid(context.command.command_id, 'tag');
    const command = { type: 'CreateTag' as const, tag_id, org_id, tag_name, commit_id, description, now: new Date().toISOString() };
    await this.operations.run(Tag, { org_id, tag_name }, command, context.command);
    return { tag_id, tag_name, commit_id };
  }
}

@CommandHandler(UpdateTagCommand)
export class UpdateTagHandler implements ICommandHandler<UpdateTagCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly commits: CommitReadModel,
  ) {}

  async execute({ context, tag_name, commit_id, description }: UpdateTagCommand): Promise<void> {
    const org_id = context.principal.org_id;
    if (commit_id) await this.commits.getReadable(org_id, commit_id);
    await this.operations.run(Tag, { org_id, tag_name }, { type: 'UpdateTag', commit_id, description, now: new Date().toISOString() }, context.command);
  }
}

@CommandHandler(DeleteTagCommand)
export class DeleteTagHandler implements ICommandHandler<DeleteTagCommand> {
  constructor(private readonly operations: Operations) {}

  async execute({ context, tag_name }: DeleteTagCommand): Promise<void> {
    await this.operations.run(Tag, { org_id: context.principal.org_id, tag_name }, { type: 'DeleteTag', now: new Date().toISOString() }, context.command);
  }
}
