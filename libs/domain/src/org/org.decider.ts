import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import type { OrgCommand } from './org.commands';
import type { OrgEvent } from './org.events';

export interface OrgState {
  org_id: string | null;
  name: string | null;
}

export const orgDecider: Decider<OrgCommand, OrgState, OrgEvent> = {
  initialState: () => ({ org_id: null, name: null }),
  decide: (command, state) => {
    if (state.org_id !== null) throw conflict(`org ${command.org_id} already exists`);
    return [{ type: 'OrgCreated', data: { org_id: command.org_id, name: command.name, created_at: command.now } }];
  },
  evolve: (_state, event) => ({ org_id: event.data.org_id, name: event.data.name }),
};
