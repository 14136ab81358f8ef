import { deciderSpec } from '../testing/decider-spec';
import { orgDecider } from './org.decider';
import type { OrgEvent } from './org.events';

const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(orgDecider);
const org_id = 'org-1';
const created: OrgEvent[] = [
  { type: 'OrgCreated', data: { org_id, name: 'acme', created_at: now } },
  { type: 'MemberAdded', data: { org_id, user_id: 'ada', role: 'owner', added_at: now } },
];
const bobJoined: OrgEvent = { type: 'MemberAdded', data: { org_id, user_id: 'bob', role: 'member', added_at: now } };

describe('org decider: an org, its members and their roles', () => {
  it('creates an org once, with its first owner', () => {
    spec.given([]).when({ type: 'CreateOrg', org_id, name: 'acme', owner_user_id: 'ada', now }).then(created);
    spec.given(created).when({ type: 'CreateOrg', org_id, name: 'acme', owner_user_id: 'ada', now }).thenThrows('conflict', 'org org-1 already exists');
  });

  it('adds a member once', () => {
    spec.given(created).when({ type: 'AddMember', user_id: 'bob', role: 'member', now }).then([bobJoined]);
    spec.given([...created, bobJoined]).when({ type: 'AddMember', user_id: 'bob', role: 'admin', now }).thenThrows('conflict', 'the user is a member of the org already (member)');
    spec.given([]).when({ type: 'AddMember', user_id: 'bob', role: 'member', now }).thenThrows('not_found', 'org not found');
  });

  it('changes a role; the same role again changes nothing', () => {
    const promoted: OrgEvent = { type: 'MemberRoleChanged', data: { org_id, user_id: 'bob', role: 'admin', previous_role: 'member', changed_at: now } };
    spec.given([...created, bobJoined]).when({ type: 'ChangeMemberRole', user_id: 'bob', role: 'admin', now }).then([promoted]);
    spec.given([...created, bobJoined, promoted]).when({ type: 'ChangeMemberRole', user_id: 'bob', role: 'admin', now }).then([]);
    spec.given(created).when({ type: 'ChangeMemberRole', user_id: 'bob', role: 'admin', now }).thenThrows('not_found', 'member not found');
  });

  it('always keeps an owner', () => {
    spec.given(created).when({ type: 'ChangeMemberRole', user_id: 'ada', role: 'admin', now }).thenThrows('conflict', /keeps at least one owner/);
    spec.given(created).when({ type: 'RemoveMember', user_id: 'ada', now }).thenThrows('conflict', /keeps at least one owner/);
    const bobOwner: OrgEvent = { type: 'MemberRoleChanged', data: { org_id, user_id: 'bob', role: 'owner', previous_role: 'member', changed_at: now } };
    spec.given([...created, bobJoined, bobOwner]).when({ type: 'RemoveMember', user_id: 'ada', now }).then([{ type: 'MemberRemoved', data: { org_id, user_id: 'ada', role: 'owner', removed_at: now } }]);
  });

  it('removes a member, who may be added again', () => {
    const removed: OrgEvent = { type: 'MemberRemoved', data: { org_id, user_id: 'bob', role: 'member', removed_at: now } };
    spec.given([...created, bobJoined]).when({ type: 'RemoveMember', user_id: 'bob', now }).then([removed]);
    spec.given([...created, bobJoined, removed]).when({ type: 'RemoveMember', user_id: 'bob', now }).thenThrows('not_found', 'member not found');
    spec.given([...created, bobJoined, removed]).when({ type: 'AddMember', user_id: 'bob', role: 'member', now }).then([bobJoined]);
  });
});
