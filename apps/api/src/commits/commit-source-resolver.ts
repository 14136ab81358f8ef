import { Injectable } from '@nestjs/common';
import { AggregateRepository } from '@arbor/application';
import { invalid, NAME_PATTERN, notFound, OrgName, Repository, repositoryTag } from '@arbor/domain';
import type { CommitDocument } from '@arbor/read-models';
import { TagReadModel } from '../tags/tag-read-model';
import { CommitReadModel } from './commit-read-model';

/**
 * Where a new VM's commit comes from: an id, an org tag, a repository reference as from_commit
 * takes it (`repo:tag`, `org/repo:tag`), or one already split (branch/by_ref/{repo}/{tag}).
 */
export type CommitSource = { commit_id: string } | { tag_name: string } | { ref: string } | { repo: string; tag: string };

/**
 * The commit a VM starts from. `through_public_repository`: reached through another org's public
 * repository, which lets any org start from it even while the commit itself is private.
 */
export interface SourceCommit {
  commit: CommitDocument;
  through_public_repository: boolean;
}

/** The contract's own words for a `ref` that is not `repo:tag` (or `org/repo:tag`). */
const BAD_REF = "Invalid ref format. Expected 'repo_name:tag_name'";

/**
 * A repository reference's parts. `repo` names a repository of the caller's org, `org/repo` one of
 * org `org` (the caller's own, or else a public one); by_ref takes the same in its first path
 * segment (`org%2Frepo`). Null when the parts cannot name anything (a name breaking the naming
 * rule, more than one "/"): no such repository can exist.
 */
function repositoryRef(repository: string, tag: string): { org_name: string | null; repo_name: string; tag_name: string } | null {
  const parts = repository.split('/');
  if (parts.length > 2 || ![...parts, tag].every((name) => NAME_PATTERN.test(name))) return null;
  return { org_name: parts.length === 2 ? parts[0] : null, repo_name: parts[parts.length - 1], tag_name: tag };
}

/** Finds the commit a new VM starts from: by id, by org tag, or by repository reference. */
@Injectable()
export class CommitSourceResolver {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly commits: CommitReadModel,
    private readonly tags: TagReadModel,
  ) {}

  async resolve(org_id: string, source: CommitSource): Promise<SourceCommit> {
    if ('commit_id' in source) return { commit: await this.commits.getReadable(org_id, source.commit_id), through_public_repository: false };
    if ('tag_name' in source) {
      const tag = await this.tags.get(org_id, source.tag_name);
      return { commit: await this.commits.getReadableById(org_id, tag.commit_id), through_public_repository: false };
    }
    if ('repo' in source) return this.byRepositoryTag(org_id, source.repo, source.tag);
    const [repo, tag, ...rest] = source.ref.split(':');
    if (!repo || !tag || rest.length) throw invalid(BAD_REF);
    return this.byRepositoryTag(org_id, repo, tag);
  }

  /**
   * A repository tag's commit, read from the repository's own stream, so a repository made private
   * is not restorable from the moment it answered. Another org's repository must be public, and
   * through it only its own commits (or public ones) are reachable: nothing else of anybody's leaks.
   */
  async byRepositoryTag(org_id: string, repository: string, tag: string): Promise<SourceCommit> {
    const ref = repositoryRef(repository, tag);
    if (ref === null) throw notFound('repository');
    const owner = ref.org_name === null ? org_id : (await this.aggregates.load(OrgName, ref.org_name)).state.org_id;
    if (owner === null) throw notFound('repository');
    const { state } = await this.aggregates.load(Repository, { org_id: owner, name: ref.repo_name });
    const foreign = owner !== org_id;
    if (state.repo_id === null || (foreign && !state.is_public)) throw notFound('repository');
    const repoTag = repositoryTag(state, ref.tag_name);
    if (!repoTag) throw notFound('tag');
    if (!foreign) return { commit: await this.commits.getReadableById(org_id, repoTag.commit_id), through_public_repository: false };
    const commit = await this.commits.getReadableById(owner, repoTag.commit_id);
    return { commit, through_public_repository: true };
  }
}
