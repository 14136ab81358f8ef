import { loadConfig } from '../libs/application/src/arbor-config';
import { openDriver } from '../apps/vm-worker/src/open-driver';

/**
 * `npm run prepare-images`: builds (or checks) the base image of the hypervisor driver this host
 * would use, with progress, into the cache directory (ARBOR_CACHE_DIR, default /var/cache/arbor).
 */
async function main() {
  const config = loadConfig();
  const driver = await openDriver(config, console.log);
  const started = Date.now();
  await driver.prepare();
  console.log(`images: ${driver.name} base image ready in ${config.cacheDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

main().catch((error) => {
  console.error(`images: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
