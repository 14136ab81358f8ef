import type { Decider, DomainEvent } from '../shared/decider';
import { conflict } from '../shared/domain-error';

/**
 * Stream `commitid-<id>`: which VM may commit under a client-chosen commit id. Ids are global and
 * a client may choose one (`POST /vm/{id}/commit {commit_id}`), so two requests racing for one id
 * on different VMs meet here, as every unique key in the log does: the first VM asked holds the id
 * (its own requests go through), any other VM is refused before anything is asked of it. The id
 * stays with that VM even if its commit fails. Schema version 1.
 */
export type CommitIdReserved = DomainEvent<'CommitIdReserved', { commit_id: string; vm_id: string }>;
export type CommitIdEvent = CommitIdReserved;

export type CommitIdCommand = { type: 'ReserveCommitId'; commit_id: string; vm_id: string };

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
