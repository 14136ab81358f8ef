import 'reflect-metadata';
import { openEventStore, runArborProcess } from '@arbor/application';
import { infoLines, serveMetrics } from '@arbor/observability';
import { openWebhookDeliverer } from './open-webhook-deliverer';

/**
 * `npm run start:webhooks`: delivers the log to the orgs' webhooks (run exactly one, like the
 * projector). Dials out to the event store and the webhooks' URLs only (and serves /metrics when
 * ARBOR_METRICS_PORT is set); its checkpoint lives in its data directory, and it derives the
 * webhooks' secrets as the api does (the same ARBOR_WEBHOOK_SECRET, or the api's data directory).
 */
runArborProcess('webhooks', async (config, log) => {
  const events = openEventStore(config, infoLines(log));
  const metrics = await serveMetrics(config.metrics, log);
  const deliverer = await openWebhookDeliverer(events, config, log);
  await deliverer.start();
  return async () => {
    await metrics?.close();
    await deliverer.stop();
    await events.close();
  };
});
