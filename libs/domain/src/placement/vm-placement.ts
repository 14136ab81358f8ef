import type { Decider, DomainEvent } from '../shared/decider';

/**
 * Stream `placement-<vm_id>`: which vm-worker (hypervisor host) a VM's machine lives on. It is a
 * reservation, like a tag name's stream: the first worker to claim the VM appends VmPlaced with
 * "no stream" and every other claim appends nothing, so a VM is created on exactly one host, and
 * only that host reconciles it, reports it dead, runs its execs and touches its files.
 * Written once, never changed. Schema version 1.
 */
export type VmPlaced = DomainEvent<'VmPlaced', { vm_id: string; worker_id: string; placed_at: string }>;
export type PlacementEvent = VmPlaced;

export type PlacementCommand = { type: 'PlaceVm'; vm_id: string; worker_id: string; now: string };

export interface PlacementState {
  worker_id: string | null;
}

export const vmPlacementDecider: Decider<PlacementCommand, PlacementState, PlacementEvent> = {
  initialState: () => ({ worker_id: null }),
  // The first claim stands; a later one (another worker, or a replay) changes nothing.
  decide: (command, state) =>
    state.worker_id !== null ? [] : [{ type: 'VmPlaced', data: { vm_id: command.vm_id, worker_id: command.worker_id, placed_at: command.now } }],
  evolve: (_state, event) => ({ worker_id: event.data.worker_id }),
};
