import 'reflect-metadata';
import { join } from 'node:path';
import { loadConfig, openEventStore, runUntilSignalled } from '@arbor/application';
import { openDriver } from './open-driver';
import { VmWorker } from './vm-worker';

/**
 * `npm run start:worker`: one per hypervisor host. Dials out to the event store only (no inbound
 * port); its checkpoint lives in its own data directory.
 */
async function main() {
  const config = loadConfig();
  const events = openEventStore(config, console.log);
  const driver = await openDriver(config, console.log);
  await driver.prepare();
  const worker = new VmWorker(events, driver, {
    stateFile: join(config.dataDir, 'worker', `${config.workerId}.json`),
    workerId: config.workerId,
    resyncIntervalMs: config.resyncIntervalMs,
    log: console.log,
  });
  await worker.start();
  await runUntilSignalled(async () => {
    await worker.stop();
    await driver.close?.();
    await events.close();
  });
}

main().catch((error) => {
  console.error(`arbor worker: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
