import type { Decider } from '../shared/decider';
import type { PlacementCommand } from './vm-placement.commands';
import type { PlacementEvent } from './vm-placement.events';

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
