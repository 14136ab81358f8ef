import { Injectable } from '@nestjs/common';
import { invalid, notFound } from '@arbor/domain';
import type { CommitDocument } from '@arbor/read-models';
import { TagReadModel } from '../tags/tag-read-model';
import { CommitReadModel } from './commit-read-model';

/**
 * Where a new VM's commit comes from: an id, an org tag, a repository reference as from_commit
 * takes it ("repo:tag"), or one already split (branch/by_ref/{repo}/{tag}, where either part may
 * hold any character the path does).
 */
export type CommitSource = { commit_id: string } | { tag_name: string } | { ref: string } | { repo: string; tag: string };

/** Finds the commit a new VM starts from: by id, by org tag, or by repository reference. */
@Injectable()
export class CommitSourceResolver {
  constructor(
    private readonly commits: CommitReadModel,
    private readonly tags: TagReadModel,
  ) {}

  async resolve(org_id: string, source: CommitSource): Promise<CommitDocument> {
    if ('commit_id' in source) return this.commits.getReadable(org_id, source.commit_id);
    if ('tag_name' in source) {
      const tag = await this.tags.get(org_id, source.tag_name);
      return this.commits.getReadable(org_id, tag.commit_id);
    }
    if ('repo' in source) return this.byRepositoryTag(org_id, source.repo, source.tag);
    const [repo, tag, ...rest] = source.ref.split(':');
    if (!repo || !tag || rest.length) throw invalid("Invalid ref format. Expected 'repo_name:tag_name'");
    return this.byRepositoryTag(org_id, repo, tag);
  }

  /**
   * Repository references ("repo:tag"). Repositories are their own resource (a later part of the
   * contract); until an org has created one, every reference is a repository that does not exist.
   */
  async byRepositoryTag(_org_id: string, _repo: string, _tag: string): Promise<CommitDocument> {
    throw notFound('repository');
  }
}
