import { Injectable } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Operations, TagHolds, type CommandContext, type TagRef } from '@arbor/application';
import type { CreateRepoTagResponseDto } from '@arbor/contracts';
import { deterministicUuid, notFound, Repository, repositoryTag, requireName, type RepositoryCommand } from '@arbor/domain';
import { CommitReadModel } from '../../commits/commit-read-model';
import { releaseCommitsLeft } from '../release-commits-left';
import { CreateRepoTagCommand, DeleteRepoTagCommand, UpdateRepoTagCommand } from './repo-tag-commands';

/**
 * Repository tags: a command on the repository's stream, with the tag holding the commit it
 * points at (TagHolds), so that commit cannot be deleted under it.
 */
@Injectable()
abstract class RepoTagHandler {
  constructor(
    protected readonly aggregates: AggregateRepository,
    protected readonly operations: Operations,
    protected readonly holds: TagHolds,
    protected readonly commits: CommitReadModel,
  ) {}

  protected ref(org_id: string, repo_name: string, tag_name: string, tag_id: string): TagRef {
    return { tag_id, label: `repo ${repo_name}:${tag_name}`, stream: Repository.stream({ org_id, name: repo_name }), org_id };
  }

  protected run(org_id: string, repo_name: string, command: RepositoryCommand, context: CommandContext) {
    return this.operations.run(Repository, { org_id, name: repo_name }, command, context);
  }

  /** Points the tag at `commit_id` through TagHolds, refusing before the hold what the repository would refuse. */
  protected pointAt(org_id: string, repo_name: string, tag_name: string, tag_id: string, commit_id: string, command: RepositoryCommand, context: CommandContext) {
    return this.holds.pointAt(
      commit_id,
      this.ref(org_id, repo_name, tag_name, tag_id),
      context,
      () => this.run(org_id, repo_name, command, context),
      () => this.aggregates.check(Repository, { org_id, name: repo_name }, command, context),
    );
  }
}

@CommandHandler(CreateRepoTagCommand)
export class CreateRepoTagHandler extends RepoTagHandler implements ICommandHandler<CreateRepoTagCommand> {
  async execute({ context, repo_name, tag_name, commit_id: named, description }: CreateRepoTagCommand): Promise<CreateRepoTagResponseDto> {
    const org_id = context.principal.org_id;
    requireName('tag_name', tag_name);
    // The repository first (404 repository), then the commit (404 commit, from the hold).
    if ((await this.aggregates.load(Repository, { org_id, name: repo_name })).state.repo_id === null) throw notFound('repository');
    // The tag holds the commit's id in the log; the answer names it as the client did.
    const commit_id = await this.commits.idInLog(org_id, named);
    const tag_id = deterministicUuid(context.command.command_id, 'repo-tag');
    const command: RepositoryCommand = { type: 'CreateRepoTag', tag_id, tag_name, commit_id, description, now: new Date().toISOString() };
    await this.pointAt(org_id, repo_name, tag_name, tag_id, commit_id, command, context.command);
    return { tag_id, reference: `${repo_name}:${tag_name}`, commit_id: named };
  }
}

@CommandHandler(UpdateRepoTagCommand)
export class UpdateRepoTagHandler extends RepoTagHandler implements ICommandHandler<UpdateRepoTagCommand> {
  async execute({ context, repo_name, tag_name, commit_id: named, description }: UpdateRepoTagCommand): Promise<void> {
    const org_id = context.principal.org_id;
    const commit_id = named ? await this.commits.idInLog(org_id, named) : named;
    const command: RepositoryCommand = { type: 'UpdateRepoTag', tag_name, commit_id, description, now: new Date().toISOString() };
    const tag = repositoryTag((await this.aggregates.load(Repository, { org_id, name: repo_name })).state, tag_name);
    if (!commit_id || !tag || tag.commit_id === commit_id) {
      // No move: the decider answers (404 repository or tag, 400 nothing to update, or the description).
      await this.run(org_id, repo_name, command, context.command);
      return;
    }
    const moved = await this.pointAt(org_id, repo_name, tag_name, tag.tag_id, commit_id, command, context.command);
    await releaseCommitsLeft(this.holds, moved.events, context.command);
  }
}

@CommandHandler(DeleteRepoTagCommand)
export class DeleteRepoTagHandler extends RepoTagHandler implements ICommandHandler<DeleteRepoTagCommand> {
  async execute({ context, repo_name, tag_name }: DeleteRepoTagCommand): Promise<void> {
    const deleted = await this.run(context.principal.org_id, repo_name, { type: 'DeleteRepoTag', tag_name, now: new Date().toISOString() }, context.command);
    await releaseCommitsLeft(this.holds, deleted.events, context.command);
  }
}
