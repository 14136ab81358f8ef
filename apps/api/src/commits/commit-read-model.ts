import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@arbor/domain';
import { READ_MODEL_STORE, type ReadModelStore, COMMIT_ANCESTORS_COLLECTION, COMMITS_COLLECTION, type CommitAncestorsDocument, type CommitDocument } from '@arbor/read-models';

export interface Page {
  limit: number;
  offset: number;
}

/** An org may read (and start VMs from) a live commit of its own or a public one. */
const isReadable = (commit: CommitDocument, org_id: string) => commit.deleted_at === null && (commit.org_id === org_id || commit.is_public);

/** Reads of the `commits` read model. Public commits are readable by every org; private ones by their own. */
@Injectable()
export class CommitReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The same reads over another store: the read models as of a log position (ReadModelsAsOf). */
  over(store: ReadModelStore): CommitReadModel {
    return new CommitReadModel(store);
  }

  /** A commit the org may read and restore (its own, or public); 404 otherwise. */
  async getReadable(org_id: string, commit_id: string): Promise<CommitDocument> {
    const commit = await this.readModels.findOne<CommitDocument>(COMMITS_COLLECTION, { _id: commit_id });
    if (!commit || !isReadable(commit, org_id)) throw notFound('commit');
    return commit;
  }

  /** A commit the org owns (may change or delete); another org's commit is reported as missing. */
  async getOwn(org_id: string, commit_id: string): Promise<CommitDocument> {
    const commit = await this.readModels.findOne<CommitDocument>(COMMITS_COLLECTION, { _id: commit_id, org_id, deleted_at: null });
    if (!commit) throw notFound('commit');
    return commit;
  }

  async list(filter: Record<string, unknown>, page: Page): Promise<{ commits: CommitDocument[]; total: number }> {
    const query = { ...filter, deleted_at: null };
    const [commits, total] = await Promise.all([
      this.readModels.find<CommitDocument>(COMMITS_COLLECTION, query, { sort: { created_at: -1, _id: 1 }, skip: page.offset, limit: page.limit }),
      this.readModels.count(COMMITS_COLLECTION, query),
    ]);
    return { commits, total };
  }

  /**
   * The chain from a commit back to its root, element 0 the commit itself: the commit's ancestor
   * ids (projected as a materialized path, nearest first), then the commits themselves in one
   * query, put in order here — two queries however deep. The chain ends before the first ancestor
   * the org may not read (another org's private commit, or a deleted one), so it never shows what
   * a single read of that commit would not.
   */
  async chain(org_id: string, commit_id: string): Promise<CommitDocument[]> {
    const path = await this.readModels.findOne<CommitAncestorsDocument>(COMMIT_ANCESTORS_COLLECTION, { _id: commit_id });
    const ids = [commit_id, ...(path?.ancestor_ids ?? [])];
    const found = await this.readModels.find<CommitDocument>(COMMITS_COLLECTION, { _id: { $in: ids } });
    const byId = new Map(found.map((commit) => [commit._id, commit]));
    const chain: CommitDocument[] = [];
    for (const id of ids) {
      const commit = byId.get(id);
      if (!commit || !isReadable(commit, org_id)) break;
      chain.push(commit);
    }
    if (chain.length === 0) throw notFound('commit');
    return chain;
  }
}
