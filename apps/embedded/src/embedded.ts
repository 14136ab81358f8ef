import type { INestApplication } from '@nestjs/common';
import { join } from 'node:path';
import { type ArborConfig, type Infrastructure, closeInfrastructure, openInfrastructure } from '@arbor/application';
import type { HypervisorDriver } from '@arbor/hypervisor';
import { createLog, infoLines, type Log } from '@arbor/observability';
import { ALL_PROJECTIONS, Projector } from '@arbor/projections';
import { bootstrapAdminKey } from '../../api/src/bootstrap/bootstrap-admin-key';
import { createApiApp } from '../../api/src/create-api-app';
import { Edge } from '../../edge/src/edge';
import { VmWorker } from '../../vm-worker/src/vm-worker';
import { openDriver } from '../../vm-worker/src/open-driver';
import { openWebhookDeliverer } from '../../webhook-deliverer/src/open-webhook-deliverer';
import type { WebhookDeliverer } from '../../webhook-deliverer/src/webhook-deliverer';

export interface EmbeddedArbor {
  infra: Infrastructure;
  app: INestApplication;
  projector: Projector;
  worker: VmWorker;
  webhooks: WebhookDeliverer;
  edge: Edge;
  driver: HypervisorDriver;
  /** The admin key, when this start created it (first start on an empty store). */
  createdAdminKey: string | null;
  adminKeyFile: string;
  url: string;
  stop(): Promise<void>;
}

/**
 * api + projector + vm-worker + webhook deliverer + edge in one process on one set of stores: the
 * default way to run Arbor. Stopping leaves the machines running; the next start finds them again.
 */
export async function startEmbedded(
  config: ArborConfig,
  options: { driver?: HypervisorDriver; log?: Log } = {},
): Promise<EmbeddedArbor> {
  const log = options.log ?? createLog(config.log);
  const infra = await openInfrastructure(config, infoLines(log));
  const driver = options.driver ?? (await openDriver(config, infoLines(log.child({ component: 'hypervisor' }))));
  await driver.prepare();
  await driver.sweep(); // what no machine holds any more goes before the worker adopts what it finds
  const projector = new Projector(infra.eventStore, infra.readModels, ALL_PROJECTIONS, log);
  await projector.start();
  const worker = new VmWorker(infra.eventStore, driver, {
    stateFile: join(config.dataDir, 'worker', `${config.workerId}.json`),
    workerId: config.workerId,
    resyncIntervalMs: config.resyncIntervalMs,
    concurrency: config.workerConcurrency,
    secrets: infra.secrets.events,
    log,
    resources: config.resources,
    dataDir: config.dataDir,
    deploy: config.deploy,
    images: config.images,
  });
  await worker.start();
  const webhooks = await openWebhookDeliverer(infra.eventStore, config, log);
  await webhooks.start();
  const bootstrap = await bootstrapAdminKey(infra.eventStore, config);
  const app = await createApiApp(infra, { log });
  await app.listen(config.port, '0.0.0.0');
  const edge = await Edge.start(config, infra, log, { readModelsCommittedHere: true }); // the projector above commits through infra.readModels
  const address = app.getHttpServer().address() as { port: number };
  return {
    infra,
    app,
    projector,
    worker,
    webhooks,
    edge,
    driver,
    createdAdminKey: bootstrap.created_key,
    adminKeyFile: bootstrap.key_file,
    url: `http://127.0.0.1:${address.port}`,
    async stop() {
      await edge.stop();
      await app.close();
      await webhooks.stop();
      await worker.stop();
      await driver.close?.();
      await projector.stop();
      await closeInfrastructure(infra);
    },
  };
}
