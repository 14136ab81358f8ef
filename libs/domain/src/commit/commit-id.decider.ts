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
    const { commit_id, vm_id } = command;
    if (command.type === 'ReleaseCommitId') return state.vm_id === vm_id ? [{ type: 'CommitIdReleased', data: { commit_id, vm_id } }] : [];
    if (state.vm_id === vm_id) return [];
    if (state.vm_id !== null) throw conflict(`commit ${commit_id} already exists`);
    return [{ type: 'CommitIdReserved', data: { commit_id, vm_id } }];
  },
  evolve: (_state, event) => ({ vm_id: event.type === 'CommitIdReserved' ? event.data.vm_id : null }),
};
