import { join } from 'node:path';
import type { ArborConfig } from '@arbor/application';
import { VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { type HypervisorDriver, QemuDriver, SandboxDriver, selectDriver } from '@arbor/hypervisor';

type DriverPaths = Pick<ArborConfig, 'dataDir' | 'cacheDir'> & Partial<Pick<ArborConfig, 'vmNetwork' | 'sandboxWarmPool' | 'sandboxDiskPool' | 'sandboxRuntime'>>;

/**
 * Machines, snapshots and built images live in the data directory; the built-in base images and
 * the guest kit in the shared cache; machines on the configured bridge.
 */
const paths = (config: DriverPaths, driver: string) => ({
  stateDir: join(config.dataDir, 'machines', driver),
  snapshotDir: join(config.dataDir, 'snapshots', driver),
  imageDir: join(config.dataDir, 'images', driver),
  cacheDir: config.cacheDir,
  network: config.vmNetwork,
});

/** The warm pool starts in the shape of a VM asked for with the defaults (it follows what creates ask for). */
export function createSandboxDriver(config: DriverPaths, log?: (line: string) => void): SandboxDriver {
  const { vcpu_count, mem_size_mib, fs_size_mib } = VM_CONFIG_DEFAULTS;
  const warmPool = { size: config.sandboxWarmPool ?? 0, shape: { vcpu_count, mem_size_mib, fs_size_mib } };
  return new SandboxDriver({ ...paths(config, 'sandbox'), warmPool, spareDisks: config.sandboxDiskPool ?? 0, runtime: config.sandboxRuntime, log });
}

export function createQemuDriver(config: DriverPaths, log?: (line: string) => void): QemuDriver {
  return new QemuDriver({ ...paths(config, 'qemu'), log });
}

/**
 * The hypervisor driver this host runs, per HYPERVISOR. auto: qemu where KVM really boots a VM
 * (real machines at full speed), else the sandbox (milliseconds per operation); qemu under TCG
 * is available with HYPERVISOR=qemu. Where the host shows that KVM cannot work (no /dev/kvm, no
 * vmx/svm), the qemu probe says so at once; otherwise it may build the qemu base image to boot a
 * probe VM, which prepare() would build anyway.
 */
export function openDriver(config: ArborConfig, log: (line: string) => void): Promise<HypervisorDriver> {
  return selectDriver<HypervisorDriver>(
    config.hypervisor,
    [
      { name: 'qemu', create: () => createQemuDriver(config, log) },
      { name: 'sandbox', create: () => createSandboxDriver(config, log) },
    ],
    log,
  );
}
