import { Tag } from '@arbor/domain';
import { type WriteOp, COMMIT_TAGS_COLLECTION, commitTagKey, type CommitTagDocument } from '@arbor/read-models';
import { projectionOf } from './projection';

/** The `commit_tags` read model: GET /commit_tags and tag lookups by name. */
export const commitTagsProjection = projectionOf(Tag, {
  name: 'commit_tags',
  collections: [COMMIT_TAGS_COLLECTION],
  indexes: [{ collection: COMMIT_TAGS_COLLECTION, keys: { org_id: 1, tag_name: 1 } }],
  project(event): WriteOp[] {
    const byTagId = { tag_id: (event.data as { tag_id: string }).tag_id };
    switch (event.type) {
      case 'TagCreated': {
        const d = event.data;
        const _id = commitTagKey(d.org_id, d.tag_name);
        const doc: CommitTagDocument = { _id, ...d, updated_at: d.created_at };
        return [{ op: 'replaceOne', collection: COMMIT_TAGS_COLLECTION, filter: { _id }, doc, upsert: true }];
      }
      case 'TagMoved':
        return [{ op: 'updateOne', collection: COMMIT_TAGS_COLLECTION, filter: byTagId, update: { $set: { commit_id: event.data.commit_id, updated_at: event.data.moved_at } } }];
      case 'TagDescriptionChanged':
        return [{ op: 'updateOne', collection: COMMIT_TAGS_COLLECTION, filter: byTagId, update: { $set: { description: event.data.description, updated_at: event.data.changed_at } } }];
      case 'TagDeleted':
        return [{ op: 'deleteOne', collection: COMMIT_TAGS_COLLECTION, filter: byTagId }];
    }
  },
});
