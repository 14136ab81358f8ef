import { join } from 'node:path';
import { DataDiskFloor, OrgQuotas, type AggregateRepository, type DeployConfig, type ImageSettings, type ResourceSettings } from '@arbor/application';
import type { HypervisorDriver } from '@arbor/hypervisor';
import type { Log } from '@arbor/observability';
import { CommitReactor } from './commit-reactor';
import { DeploySaga } from './deploy-saga';
import { DomainReleaser } from './domain-releaser';
import { ExecRunner } from './exec-runner';
import { ForkSaga } from './fork-saga';
import { GuestFileReactor } from './guest-file-reactor';
import { ImageBuilder } from './image-builder';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';
import { VmReconciler } from './vm-reconciler';

/** What bounds the worker applies: the exec output cap, the data disk's floor (its data directory's disk); how it deploys and makes images. */
export interface WorkerBounds {
  resources: ResourceSettings;
  dataDir: string;
  deploy: DeployConfig;
  images: ImageSettings;
}

/** Every reactor the worker runs, one per aggregate it acts on; VM work (and a VM's domains) only for VMs placed here. */
export function createReactors(aggregates: AggregateRepository, driver: HypervisorDriver, placements: VmPlacements, log: Log, bounds: WorkerBounds): StreamReactor[] {
  const quotas = new OrgQuotas(aggregates, bounds.resources.limits);
  const disk = new DataDiskFloor(bounds.dataDir, bounds.resources.dataDiskFloorMib);
  return [
    new VmReconciler(aggregates, driver, placements, log, { quotas, disk }),
    new CommitReactor(aggregates, driver, log, quotas),
    new ExecRunner(aggregates, driver, placements, log, { outputMaxBytes: bounds.resources.execOutputMaxBytes }),
    new GuestFileReactor(aggregates, driver, placements, log),
    new ForkSaga(aggregates, log),
    new DeploySaga(aggregates, driver, placements, log, { config: bounds.deploy, cloneDir: join(bounds.dataDir, 'deploy-clones') }),
    new DomainReleaser(aggregates, placements, log),
    new ImageBuilder(aggregates, driver, log, { workerId: placements.workerId, dataDir: bounds.dataDir, settings: bounds.images }),
  ];
}
