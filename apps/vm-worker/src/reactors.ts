import type { AggregateRepository } from '@arbor/application';
import type { HypervisorDriver } from '@arbor/hypervisor';
import type { Log } from '@arbor/observability';
import { CommitReactor } from './commit-reactor';
import { ExecRunner } from './exec-runner';
import { ForkSaga } from './fork-saga';
import { GuestFileReactor } from './guest-file-reactor';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';
import { VmReconciler } from './vm-reconciler';

/** Every reactor the worker runs, one per aggregate it acts on; VM work only for VMs placed here. */
export function createReactors(aggregates: AggregateRepository, driver: HypervisorDriver, placements: VmPlacements, log: Log): StreamReactor[] {
  return [
    new VmReconciler(aggregates, driver, placements, log),
    new CommitReactor(aggregates, driver, log),
    new ExecRunner(aggregates, driver, placements, log),
    new GuestFileReactor(aggregates, driver, placements, log),
    new ForkSaga(aggregates, log),
  ];
}
