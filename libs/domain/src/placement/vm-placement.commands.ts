import type { DomainCommand } from '../shared/decider';

export type PlaceVm = DomainCommand<'PlaceVm', { vm_id: string; worker_id: string; now: string }>;
export type PlacementCommand = PlaceVm;
