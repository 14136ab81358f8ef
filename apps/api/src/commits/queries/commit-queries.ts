import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ListCommitsResponseDto, VmCommitEntityDto } from '@arbor/contracts';
import type { AsOf } from '../../time-travel/as-of';
import { ReadModelsAsOf } from '../../time-travel/read-models-as-of';
import { AS_IN_LOG, CommitNames } from '../commit-names';
import { commitIdsOf, presentCommit, presentCommitEntity } from '../commit-presenter';
import { CommitReadModel, type Page } from '../commit-read-model';

/** GET /commits (the org's) and GET /commits/public (every org's public commits), newest first; `as_of` for the past. */
export class ListCommitsQuery extends Query<ListCommitsResponseDto> {
  constructor(
    readonly scope: { org_id: string } | 'public',
    readonly page: Page,
    readonly as_of?: AsOf,
  ) {
    super();
  }
}

@QueryHandler(ListCommitsQuery)
export class ListCommitsHandler implements IQueryHandler<ListCommitsQuery> {
  constructor(
    private readonly commits: CommitReadModel,
    private readonly asOf: ReadModelsAsOf,
    private readonly names: CommitNames,
  ) {}

  execute({ scope, page, as_of }: ListCommitsQuery): Promise<ListCommitsResponseDto> {
    const filter = scope === 'public' ? { is_public: true } : { org_id: scope.org_id };
    return this.asOf.read(as_of, this.commits, async (commits) => {
      const { commits: found, total } = await commits.list(filter, page);
      // The public listing is every org's: ids as they are in the log (a chosen id names a commit only in its own org).
      const name = scope === 'public' ? AS_IN_LOG : await this.names.namingFor(scope.org_id, commitIdsOf(found));
      return { commits: found.map((commit) => presentCommit(commit, name)), total, limit: page.limit, offset: page.offset };
    });
  }
}

/** GET /vm/commits/{id}/parents: the commit, then its ancestors to the root; `as_of` for the past. */
export class GetCommitParentsQuery extends Query<VmCommitEntityDto[]> {
  constructor(
    readonly org_id: string,
    readonly commit_id: string,
    readonly as_of?: AsOf,
  ) {
    super();
  }
}

@QueryHandler(GetCommitParentsQuery)
export class GetCommitParentsHandler implements IQueryHandler<GetCommitParentsQuery> {
  constructor(
    private readonly commits: CommitReadModel,
    private readonly asOf: ReadModelsAsOf,
    private readonly names: CommitNames,
  ) {}

  execute({ org_id, commit_id, as_of }: GetCommitParentsQuery): Promise<VmCommitEntityDto[]> {
    return this.asOf.read(as_of, this.commits, async (commits) => {
      const chain = await commits.chain(org_id, commit_id);
      const name = await this.names.namingFor(org_id, commitIdsOf(chain));
      return chain.map((commit) => presentCommitEntity(commit, name));
    });
  }
}
