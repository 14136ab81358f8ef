import { join } from 'node:path';
import type { ArborConfig } from '../../../libs/application/src/arbor-config';
import type { HypervisorDriver } from '../../../libs/hypervisor/src/hypervisor-driver.port';
import { SandboxDriver } from '../../../libs/hypervisor/src/sandbox/sandbox-driver';
import { selectDriver } from '../../../libs/hypervisor/src/select-driver';

/** The sandbox driver of a data directory (machines and snapshots live there; images in the cache). */
export function createSandboxDriver(config: Pick<ArborConfig, 'dataDir' | 'cacheDir'>, log?: (line: string) => void): SandboxDriver {
  return new SandboxDriver({
    stateDir: join(config.dataDir, 'machines', 'sandbox'),
    snapshotDir: join(config.dataDir, 'snapshots', 'sandbox'),
    cacheDir: config.cacheDir,
    log,
  });
}

/** The hypervisor driver this host runs, per HYPERVISOR (auto: the best that works here). */
export function openDriver(config: ArborConfig, log: (line: string) => void): Promise<HypervisorDriver> {
  return selectDriver(config.hypervisor, [{ name: 'sandbox', create: () => createSandboxDriver(config, log) }], log);
}
