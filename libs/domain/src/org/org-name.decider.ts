import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import { requireName } from '../shared/names';
import type { OrgNameCommand } from './org-name.commands';
import type { OrgNameEvent } from './org-name.events';

export interface OrgNameState {
  org_id: string | null;
}

export const orgNameDecider: Decider<OrgNameCommand, OrgNameState, OrgNameEvent> = {
  initialState: () => ({ org_id: null }),
  decide: (command, state) => {
    requireName('org name', command.name);
    if (state.org_id === command.org_id) return [];
    if (state.org_id !== null) throw conflict(`org name '${command.name}' is taken`);
    return [{ type: 'OrgNameReserved', data: { name: command.name, org_id: command.org_id, reserved_at: command.now } }];
  },
  evolve: (_state, event) => ({ org_id: event.data.org_id }),
};
