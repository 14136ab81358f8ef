import { deciderSpec } from '../testing/decider-spec';
import { vmPlacementDecider } from './vm-placement.decider';
import type { PlacementEvent } from './vm-placement.events';

const vm_id = '11111111-1111-4111-8111-111111111111';
const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(vmPlacementDecider);
const placedOn = (worker_id: string): PlacementEvent => ({ type: 'VmPlaced', data: { vm_id, worker_id, placed_at: now } });

describe('vm placement: the first claim stands', () => {
  it('places an unplaced VM on the claiming worker', () =>
    spec.given([]).when({ type: 'PlaceVm', vm_id, worker_id: 'host-a', now }).then([placedOn('host-a')]));

  it('a later claim, by another worker or the same one, changes nothing', () => {
    spec.given([placedOn('host-a')]).when({ type: 'PlaceVm', vm_id, worker_id: 'host-b', now }).then([]);
    spec.given([placedOn('host-a')]).when({ type: 'PlaceVm', vm_id, worker_id: 'host-a', now }).then([]);
  });
});
