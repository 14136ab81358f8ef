import { SignIn, SshKey, type SignInEvent, type SshKeyEvent } from '@arbor/domain';
import { SSH_KEYS_COLLECTION, type SshKeyDocument, type WriteOp } from '@arbor/read-models';
import type { Projection } from './projection';

/** The `ssh_keys` read model: the SSH keys bound to accounts, and when each last confirmed a sign-in. */
export const sshKeysProjection: Projection = {
  name: 'ssh_keys',
  collections: [SSH_KEYS_COLLECTION],
  aggregates: [SshKey, SignIn],
  indexes: [{ collection: SSH_KEYS_COLLECTION, keys: { user_id: 1, bound_at: 1 } }],
  project(event: SshKeyEvent | SignInEvent): WriteOp[] {
    switch (event.type) {
      case 'SshKeyBound': {
        const doc: SshKeyDocument = { _id: event.data.fingerprint, ...event.data, last_seen_at: event.data.bound_at };
        return [{ op: 'replaceOne', collection: SSH_KEYS_COLLECTION, filter: { _id: doc._id }, doc, upsert: true }];
      }
      case 'SshKeyUnbound':
        return [{ op: 'deleteOne', collection: SSH_KEYS_COLLECTION, filter: { _id: event.data.fingerprint, key_id: event.data.key_id } }];
      case 'SignInLinkFollowed':
        return [{ op: 'updateOne', collection: SSH_KEYS_COLLECTION, filter: { _id: event.data.ssh_key_fingerprint }, update: { $set: { last_seen_at: event.data.followed_at } } }];
      default:
        return [];
    }
  },
};
