import { User } from '@arbor/domain';
import { USERS_COLLECTION, type UserDocument, type WriteOp } from '@arbor/read-models';
import { projectionOf } from './projection';

/** The `users` read model: every user, their address and whether it is verified. */
export const usersProjection = projectionOf(User, {
  name: 'users',
  collections: [USERS_COLLECTION],
  indexes: [{ collection: USERS_COLLECTION, keys: { registered_at: 1 } }],
  project(event): WriteOp[] {
    switch (event.type) {
      case 'UserRegistered': {
        const { user_id, email, registered_at } = event.data;
        const doc: UserDocument = { _id: user_id, user_id, email, email_verified: false, registered_at, verified_at: null };
        return [{ op: 'replaceOne', collection: USERS_COLLECTION, filter: { _id: user_id }, doc, upsert: true }];
      }
      case 'EmailVerified':
        return [{ op: 'updateOne', collection: USERS_COLLECTION, filter: { _id: event.data.user_id }, update: { $set: { email_verified: true, verified_at: event.data.verified_at } } }];
    }
  },
});
