import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import type { CommitIdCommand } from './commit-id.commands';
import type { CommitIdEvent } from './commit-id.events';

export interface CommitIdState {
  vm_id: string | null;
}

export const commitIdDecider: Decider<CommitIdCommand, CommitIdState, CommitIdEvent> = {
  initialState: () => ({ vm_id: null }),
  decide: (command, state) => {
    if (state.vm_id === command.vm_id) return [];
    if (state.vm_id !== null) throw conflict(`commit ${command.commit_id} already exists`);
    return [{ type: 'CommitIdReserved', data: { commit_id: command.commit_id, vm_id: command.vm_id } }];
  },
  evolve: (_state, event) => ({ vm_id: event.data.vm_id }),
};
