import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `placement-<vm_id>`: which vm-worker (hypervisor host) a VM's machine lives on. It is a
 * reservation, like a tag name's stream: the first worker to claim the VM appends VmPlaced with
 * "no stream" and every other claim appends nothing, so a VM is created on exactly one host, and
 * only that host reconciles it, reports it dead, runs its execs and touches its files.
 * Written once, never changed.
 */
export type VmPlaced = DomainEvent<'VmPlaced', { vm_id: string; worker_id: string; placed_at: string }>;
export type PlacementEvent = VmPlaced;
export const PLACEMENT_EVENT_TYPES = eventTypes<PlacementEvent>()('VmPlaced');
