import type { EventStore } from '../../../libs/event-store/src/event-store.port';
import type { HypervisorDriver } from '../../../libs/hypervisor/src/hypervisor-driver.port';
import type { StreamReactor } from './stream-reactor';
import { CommitReactor } from './commit-reactor';
import { ExecRunner } from './exec-runner';
import { GuestFileReactor } from './guest-file-reactor';
import { VmReconciler } from './vm-reconciler';

/** Every reactor the worker runs, one per kind of stream it acts on. */
export function createReactors(events: EventStore, driver: HypervisorDriver, log: (line: string) => void): StreamReactor[] {
  return [
    new VmReconciler(events, driver, log),
    new CommitReactor(events, driver, log),
    new ExecRunner(events, driver, log),
    new GuestFileReactor(events, driver, log),
  ];
}
