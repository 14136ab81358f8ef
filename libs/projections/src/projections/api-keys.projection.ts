import { ApiKey, ApiKeyUsage, type ApiKeyEvent, type ApiKeyUsageEvent } from '@arbor/domain';
import { API_KEYS_COLLECTION, type ApiKeyDocument, type WriteOp } from '@arbor/read-models';
import type { Projection, ProjectionReads } from './projection';

/** The `api_keys` read model: every key issued, whose it is, when it was revoked and last used (to the hour). */
export const apiKeysProjection: Projection = {
  name: 'api_keys',
  collections: [API_KEYS_COLLECTION],
  aggregates: [ApiKey, ApiKeyUsage],
  indexes: [
    { collection: API_KEYS_COLLECTION, keys: { org_id: 1, created_at: 1, _id: 1 } },
    { collection: API_KEYS_COLLECTION, keys: { user_id: 1, created_at: 1, _id: 1 } },
  ],
  async project(event: ApiKeyEvent | ApiKeyUsageEvent, _recorded, reads: ProjectionReads): Promise<WriteOp[]> {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { key_id, org_id, user_id, label, is_operator, issued_at } = event.data;
        const doc: ApiKeyDocument = { _id: key_id, key_id, org_id, user_id, label, is_operator, created_at: issued_at, revoked_at: null, last_used_at: null };
        return [{ op: 'replaceOne', collection: API_KEYS_COLLECTION, filter: { _id: key_id }, doc, upsert: true }];
      }
      case 'ApiKeyRevoked':
        return [{ op: 'updateOne', collection: API_KEYS_COLLECTION, filter: { _id: event.data.key_id }, update: { $set: { revoked_at: event.data.revoked_at } } }];
      case 'ApiKeyUsed': {
        // Processes record their hours independently: keep the latest whatever order they land in.
        const key = await reads.findOne<ApiKeyDocument>(API_KEYS_COLLECTION, { _id: event.data.key_id });
        if (!key || (key.last_used_at !== null && key.last_used_at >= event.data.used_at)) return [];
        return [{ op: 'updateOne', collection: API_KEYS_COLLECTION, filter: { _id: event.data.key_id }, update: { $set: { last_used_at: event.data.used_at } } }];
      }
    }
  },
};
