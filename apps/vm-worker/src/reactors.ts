import type { EventStore } from '@arbor/event-store';
import type { HypervisorDriver } from '@arbor/hypervisor';
import type { StreamReactor } from './stream-reactor';
import { CommitReactor } from './commit-reactor';
import { ExecRunner } from './exec-runner';
import { GuestFileReactor } from './guest-file-reactor';
import { VmReconciler } from './vm-reconciler';
import type { VmPlacements } from './vm-placements';

/** Every reactor the worker runs, one per kind of stream it acts on; VM work only for VMs placed here. */
export function createReactors(events: EventStore, driver: HypervisorDriver, placements: VmPlacements, log: (line: string) => void): StreamReactor[] {
  return [
    new VmReconciler(events, driver, placements, log),
    new CommitReactor(events, driver, log),
    new ExecRunner(events, driver, placements, log),
    new GuestFileReactor(events, driver, placements, log),
  ];
}
