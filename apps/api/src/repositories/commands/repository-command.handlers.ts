import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Operations, TagHolds } from '@arbor/application';
import type { CreateRepositoryResponseDto } from '@arbor/contracts';
import { deterministicUuid, Repository, requireName } from '@arbor/domain';
import { releaseCommitsLeft } from '../release-commits-left';
import { CreateRepositoryCommand, DeleteRepositoryCommand, SetRepositoryVisibilityCommand } from './repository-commands';

@CommandHandler(CreateRepositoryCommand)
export class CreateRepositoryHandler implements ICommandHandler<CreateRepositoryCommand> {
  constructor(private readonly operations: Operations) {}

  async execute({ context, name, description }: CreateRepositoryCommand): Promise<CreateRepositoryResponseDto> {
    const org_id = context.principal.org_id;
    // The name first: it names the stream.
    requireName('name', name);
    const repo_id = deterministicUuid(context.command.command_id, 'repository');
    await this.operations.run(Repository, { org_id, name }, { type: 'CreateRepository', repo_id, org_id, name, description, now: new Date().toISOString() }, context.command);
    return { repo_id, name };
  }
}

@CommandHandler(SetRepositoryVisibilityCommand)
export class SetRepositoryVisibilityHandler implements ICommandHandler<SetRepositoryVisibilityCommand> {
  constructor(private readonly operations: Operations) {}

  async execute({ context, name, is_public }: SetRepositoryVisibilityCommand): Promise<void> {
    await this.operations.run(Repository, { org_id: context.principal.org_id, name }, { type: 'SetRepositoryVisibility', is_public, now: new Date().toISOString() }, context.command);
  }
}

@CommandHandler(DeleteRepositoryCommand)
export class DeleteRepositoryHandler implements ICommandHandler<DeleteRepositoryCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly holds: TagHolds,
  ) {}

  /** Its tags go with it (in the same append), then they let go of their commits. */
  async execute({ context, name }: DeleteRepositoryCommand): Promise<void> {
    const deleted = await this.operations.run(Repository, { org_id: context.principal.org_id, name }, { type: 'DeleteRepository', now: new Date().toISOString() }, context.command);
    await releaseCommitsLeft(this.holds, deleted.events, context.command);
  }
}
