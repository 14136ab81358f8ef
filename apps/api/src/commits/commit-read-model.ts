import { Inject, Injectable } from '@nestjs/common';
import { notFound, orgCommitId } from '@arbor/domain';
import { READ_MODEL_STORE, type ReadModelStore, COMMIT_ANCESTORS_COLLECTION, COMMITS_COLLECTION, type CommitAncestorsDocument, type CommitDocument } from '@arbor/read-models';

export interface Page {
  limit: number;
  offset: number;
}

/** An org may read (and start VMs from) a live commit of its own or a public one. */
const isReadable = (commit: CommitDocument, org_id: string) => commit.deleted_at === null && (commit.org_id === org_id || commit.is_public);

/**
 * Reads of the `commits` read model. Public commits are readable by every org; private ones by their own.
 *
 * A commit id a client gives is a name in its org: the org's own chosen id first (the commit
 * `orgCommitId(org, id)` in the log), else the id itself (generated ids, and every other org's
 * commits, are their ids in the log). So another org's chosen id names nothing, exactly like an id
 * nobody has. Ids read from the log (a tag's commit, a repository tag's) are looked up as they are.
 */
@Injectable()
export class CommitReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The same reads over another store: the read models as of a log position (ReadModelsAsOf). */
  over(store: ReadModelStore): CommitReadModel {
    return new CommitReadModel(store);
  }

  /** The commit an id given by org `org_id` names (see above), readable or not; null for none. */
  async named(org_id: string, commit_id: string): Promise<CommitDocument | null> {
    const own = orgCommitId(org_id, commit_id);
    const found = await this.readModels.find<CommitDocument>(COMMITS_COLLECTION, { _id: { $in: [own, commit_id] } });
    return found.find((commit) => commit._id === own) ?? found.find((commit) => commit._id === commit_id) ?? null;
  }

  /** The id in the log of the commit an id given by the org names; the id itself when it names none (what checks it then answers). */
  async idInLog(org_id: string, commit_id: string): Promise<string> {
    return (await this.named(org_id, commit_id))?._id ?? commit_id;
  }

  /** A commit, named by the org, that the org may read and restore (its own, or public); 404 otherwise. */
  async getReadable(org_id: string, commit_id: string): Promise<CommitDocument> {
    return this.readable(org_id, await this.named(org_id, commit_id));
  }

  /** A commit by its id in the log (a tag's, a repository tag's) that the org may read and restore; 404 otherwise. */
  async getReadableById(org_id: string, commit_id: string): Promise<CommitDocument> {
    return this.readable(org_id, await this.readModels.findOne<CommitDocument>(COMMITS_COLLECTION, { _id: commit_id }));
  }

  /** A commit, named by the org, that the org owns (may change or delete); another org's commit is reported as missing. */
  async getOwn(org_id: string, commit_id: string): Promise<CommitDocument> {
    const commit = await this.named(org_id, commit_id);
    if (!commit || commit.org_id !== org_id || commit.deleted_at !== null) throw notFound('commit');
    return commit;
  }

  private readable(org_id: string, commit: CommitDocument | null): CommitDocument {
    if (!commit || !isReadable(commit, org_id)) throw notFound('commit');
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
   * The chain from a commit back to its root, element 0 the commit itself: the commit, its ancestor
   * ids (projected as a materialized path, nearest first), then the ancestors themselves in one
   * query, put in order here — three queries however deep. The chain ends before the first ancestor
   * the org may not read (another org's private commit, or a deleted one), so it never shows what
   * a single read of that commit would not. The commit is named by the org; its ancestors are ids in the log.
   */
  async chain(org_id: string, named: string): Promise<CommitDocument[]> {
    const asked = await this.named(org_id, named);
    if (!asked) throw notFound('commit');
    const path = await this.readModels.findOne<CommitAncestorsDocument>(COMMIT_ANCESTORS_COLLECTION, { _id: asked._id });
    const ids = [asked._id, ...(path?.ancestor_ids ?? [])];
    const found = ids.length > 1 ? await this.readModels.find<CommitDocument>(COMMITS_COLLECTION, { _id: { $in: ids.slice(1) } }) : [];
    const byId = new Map([asked, ...found].map((commit) => [commit._id, commit]));
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
