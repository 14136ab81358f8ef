import { Org } from '@arbor/domain';
import { ORG_MEMBERS_COLLECTION, orgMemberKey, type OrgMemberDocument, type WriteOp } from '@arbor/read-models';
import { projectionOf } from './projection';

/** The `org_members` read model: who belongs to which org, with which role (an org's members, a user's orgs). */
export const orgMembersProjection = projectionOf(Org, {
  name: 'org_members',
  collections: [ORG_MEMBERS_COLLECTION],
  indexes: [
    { collection: ORG_MEMBERS_COLLECTION, keys: { org_id: 1, added_at: 1 } },
    { collection: ORG_MEMBERS_COLLECTION, keys: { user_id: 1, added_at: 1 } },
  ],
  project(event): WriteOp[] {
    switch (event.type) {
      case 'OrgCreated':
        return [];
      case 'MemberAdded': {
        const { org_id, user_id, role, added_at } = event.data;
        const _id = orgMemberKey(org_id, user_id);
        const doc: OrgMemberDocument = { _id, org_id, user_id, role, added_at };
        return [{ op: 'replaceOne', collection: ORG_MEMBERS_COLLECTION, filter: { _id }, doc, upsert: true }];
      }
      case 'MemberRoleChanged':
        return [{ op: 'updateOne', collection: ORG_MEMBERS_COLLECTION, filter: { _id: orgMemberKey(event.data.org_id, event.data.user_id) }, update: { $set: { role: event.data.role } } }];
      case 'MemberRemoved':
        return [{ op: 'deleteOne', collection: ORG_MEMBERS_COLLECTION, filter: { _id: orgMemberKey(event.data.org_id, event.data.user_id) } }];
    }
  },
});
