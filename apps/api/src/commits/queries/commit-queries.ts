import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ListCommitsResponseDto, VmCommitEntityDto } from '@arbor/contracts';
import { presentCommit, presentCommitEntity } from '../commit-presenter';
import { CommitReadModel, type Page } from '../commit-read-model';

/** GET /commits (the org's) and GET /commits/public (every org's public commits), newest first. */
export class ListCommitsQuery extends Query<ListCommitsResponseDto> {
  constructor(
    readonly scope: { org_id: string } | 'public',
    readonly page: Page,
  ) {
    super();
  }
}

@QueryHandler(ListCommitsQuery)
export class ListCommitsHandler implements IQueryHandler<ListCommitsQuery> {
  constructor(private readonly commits: CommitReadModel) {}

  async execute({ scope, page }: ListCommitsQuery): Promise<ListCommitsResponseDto> {
    const filter = scope === 'public' ? { is_public: true } : { org_id: scope.org_id };
    const { commits, total } = await this.commits.list(filter, page);
    return { commits: commits.map(presentCommit), total, limit: page.limit, offset: page.offset };
  }
}

/** GET /vm/commits/{id}/parents: the commit, then its ancestors to the root. */
export class GetCommitParentsQuery extends Query<VmCommitEntityDto[]> {
  constructor(
    readonly org_id: string,
    readonly commit_id: string,
  ) {
    super();
  }
}

@QueryHandler(GetCommitParentsQuery)
export class GetCommitParentsHandler implements IQueryHandler<GetCommitParentsQuery> {
  constructor(private readonly commits: CommitReadModel) {}

  async execute({ org_id, commit_id }: GetCommitParentsQuery): Promise<VmCommitEntityDto[]> {
    return (await this.commits.chain(org_id, commit_id)).map(presentCommitEntity);
  }
}
