import { Commit } from '@arbor/domain';
import { type WriteOp, COMMIT_ANCESTORS_COLLECTION, COMMITS_COLLECTION, type CommitAncestorsDocument, type CommitDocument } from '@arbor/read-models';
import { projectionOf, type ProjectionReads } from './projection';

/**
 * A commit's ancestors, nearest first (materialized path): its parent commit (the commit its
 * source VM started from, `grandparent_commit_id`), then the parent's own ancestors — projected
 * earlier, since a VM can only start from a commit that exists.
 */
async function ancestorsOf(parent_id: string | null, reads: ProjectionReads): Promise<string[]> {
  if (!parent_id) return [];
  const parent = await reads.findOne<CommitAncestorsDocument>(COMMIT_ANCESTORS_COLLECTION, { _id: parent_id });
  return [parent_id, ...(parent?.ancestor_ids ?? [])];
}

/** The `commits` read model (GET /commits, /commits/public, PATCH answers) and each commit's ancestors (the parent chain). */
export const commitsProjection = projectionOf(Commit, {
  name: 'commits',
  collections: [COMMITS_COLLECTION, COMMIT_ANCESTORS_COLLECTION],
  indexes: [
    { collection: COMMITS_COLLECTION, keys: { org_id: 1, deleted_at: 1, created_at: -1 } },
    { collection: COMMITS_COLLECTION, keys: { is_public: 1, deleted_at: 1, created_at: -1 } },
  ],
  async project(event, _recorded, reads): Promise<WriteOp[]> {
    switch (event.type) {
      case 'CommitCreated': {
        const d = event.data;
        const doc: CommitDocument = { _id: d.commit_id, ...d, is_public: false, deleted_at: null };
        delete (doc as Partial<CommitDocument>).driver;
        const ancestors: CommitAncestorsDocument = { _id: d.commit_id, ancestor_ids: await ancestorsOf(d.grandparent_commit_id, reads) };
        return [
          { op: 'replaceOne', collection: COMMITS_COLLECTION, filter: { _id: d.commit_id }, doc, upsert: true },
          { op: 'replaceOne', collection: COMMIT_ANCESTORS_COLLECTION, filter: { _id: d.commit_id }, doc: ancestors, upsert: true },
        ];
      }
      case 'CommitUpdated': {
        const { commit_id, is_public, name, description } = event.data;
        return [{ op: 'updateOne', collection: COMMITS_COLLECTION, filter: { _id: commit_id }, update: { $set: { is_public, name, description } } }];
      }
      case 'CommitDeleted':
        return [{ op: 'updateOne', collection: COMMITS_COLLECTION, filter: { _id: event.data.commit_id }, update: { $set: { deleted_at: event.data.deleted_at } } }];
      default:
        return [];
    }
  },
});
