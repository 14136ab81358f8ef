import { loadConfig } from '@arbor/application';
import type { HypervisorDriver } from '@arbor/hypervisor';
import { createQemuDriver, createSandboxDriver } from '../apps/vm-worker/src/open-driver';

/**
 * `npm run prepare-images`: builds (or checks) the base image of every hypervisor driver that can
 * run on this host, with progress, into the cache directory (ARBOR_CACHE_DIR, default
 * /var/cache/arbor), so first VMs and test runs do not pay for it.
 */
async function main() {
  const config = loadConfig();
  const drivers: HypervisorDriver[] = [createSandboxDriver(config, console.log), createQemuDriver(config, console.log)];
  for (const driver of drivers) {
    const probe = await driver.probe();
    if (!probe.ok) {
      console.log(`images: skipping ${driver.name}: ${probe.reason}`);
      continue;
    }
    const started = Date.now();
    await driver.prepare();
    console.log(`images: ${driver.name} base image ready in ${config.cacheDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    await driver.close?.();
  }
}

main().catch((error) => {
  console.error(`images: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
