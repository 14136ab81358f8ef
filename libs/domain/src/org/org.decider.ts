import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import type { Role } from './org-roles';
import type { OrgCommand } from './org.commands';
import type { OrgEvent } from './org.events';

export interface OrgState {
  org_id: string | null;
  name: string | null;
  /** Each member's role, by user id. */
  members: Record<string, Role>;
}

const LAST_OWNER = 'an org keeps at least one owner: make another member owner first';

function requireOrg(state: OrgState): string {
  if (state.org_id === null) throw notFound('org');
  return state.org_id;
}

function requireMember(state: OrgState, user_id: string): Role {
  const role = state.members[user_id];
  if (!role) throw notFound('member');
  return role;
}

const ownersBut = (state: OrgState, user_id: string) => Object.entries(state.members).filter(([id, role]) => role === 'owner' && id !== user_id).length;

export const orgDecider: Decider<OrgCommand, OrgState, OrgEvent> = {
  initialState: () => ({ org_id: null, name: null, members: {} }),
  decide: (command, state) => {
    switch (command.type) {
      case 'CreateOrg': {
        if (state.org_id !== null) throw conflict(`org ${command.org_id} already exists`);
        const { org_id, name, owner_user_id, now } = command;
        return [
          { type: 'OrgCreated', data: { org_id, name, created_at: now } },
          { type: 'MemberAdded', data: { org_id, user_id: owner_user_id, role: 'owner', added_at: now } },
        ];
      }
      case 'AddMember': {
        const org_id = requireOrg(state);
        const role = state.members[command.user_id];
        if (role) throw conflict(`the user is a member of the org already (${role})`);
        return [{ type: 'MemberAdded', data: { org_id, user_id: command.user_id, role: command.role, added_at: command.now } }];
      }
      case 'ChangeMemberRole': {
        const org_id = requireOrg(state);
        const previous_role = requireMember(state, command.user_id);
        if (previous_role === command.role) return [];
        if (previous_role === 'owner' && ownersBut(state, command.user_id) === 0) throw conflict(LAST_OWNER);
        return [{ type: 'MemberRoleChanged', data: { org_id, user_id: command.user_id, role: command.role, previous_role, changed_at: command.now } }];
      }
      case 'RemoveMember': {
        const org_id = requireOrg(state);
        const role = requireMember(state, command.user_id);
        if (role === 'owner' && ownersBut(state, command.user_id) === 0) throw conflict(LAST_OWNER);
        return [{ type: 'MemberRemoved', data: { org_id, user_id: command.user_id, role, removed_at: command.now } }];
      }
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'OrgCreated':
        return { ...state, org_id: event.data.org_id, name: event.data.name };
      case 'MemberAdded':
      case 'MemberRoleChanged':
        return { ...state, members: { ...state.members, [event.data.user_id]: event.data.role } };
      case 'MemberRemoved': {
        const { [event.data.user_id]: _, ...members } = state.members;
        return { ...state, members };
      }
    }
  },
};
