import './uv-threadpool';
import 'reflect-metadata';
import { join } from 'node:path';
import { openEventStore, runArborProcess, Secrets } from '@arbor/application';
import { infoLines, serveMetrics } from '@arbor/observability';
import { openDriver } from './open-driver';
import { VmWorker } from './vm-worker';

/**
 * `npm run start:worker`: one per hypervisor host. Dials out to the event store and the key store
 * (MongoDB, or the data directory's with the embedded stores), no inbound port (unless
 * ARBOR_METRICS_PORT opens one for /metrics); its checkpoint lives in its own data directory.
 */
runArborProcess('worker', async (config, log) => {
  const events = openEventStore(config, infoLines(log));
  const secrets = new Secrets(config);
  const driver = await openDriver(config, infoLines(log.child({ component: 'hypervisor' })));
  await driver.prepare();
  // Before the worker adopts the machines it finds: what no machine holds (a port, an address, a rule) goes.
  await driver.sweep();
  const metrics = await serveMetrics(config.metrics, log);
  const worker = new VmWorker(events, driver, {
    stateFile: join(config.dataDir, 'worker', `${config.workerId}.json`),
    workerId: config.workerId,
    resyncIntervalMs: config.resyncIntervalMs,
    concurrency: config.workerConcurrency,
    secrets: secrets.events,
    log,
    resources: config.resources,
    dataDir: config.dataDir,
    deploy: config.deploy,
    images: config.images,
  });
  await worker.start();
  return async () => {
    await metrics?.close();
    await worker.stop();
    await driver.close?.();
    await Promise.all([events.close(), secrets.close()]);
  };
});
