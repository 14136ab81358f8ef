import 'reflect-metadata';
import { join } from 'node:path';
import { openEventStore, runArborProcess } from '@arbor/application';
import { infoLines, serveMetrics } from '@arbor/observability';
import { openDriver } from './open-driver';
import { VmWorker } from './vm-worker';

/**
 * `npm run start:worker`: one per hypervisor host. Dials out to the event store only (no inbound
 * port, unless ARBOR_METRICS_PORT opens one for /metrics); its checkpoint lives in its own data directory.
 */
runArborProcess('worker', async (config, log) => {
  const events = openEventStore(config, infoLines(log));
  const driver = await openDriver(config, infoLines(log.child({ component: 'hypervisor' })));
  await driver.prepare();
  const metrics = await serveMetrics(config.metrics, log);
  const worker = new VmWorker(events, driver, {
    stateFile: join(config.dataDir, 'worker', `${config.workerId}.json`),
    workerId: config.workerId,
    resyncIntervalMs: config.resyncIntervalMs,
    log,
  });
  await worker.start();
  return async () => {
    await metrics?.close();
    await worker.stop();
    await driver.close?.();
    await events.close();
  };
});
