import 'reflect-metadata';
import { loadConfig, openEventStore, runUntilSignalled } from '@arbor/application';
import { openWebhookDeliverer } from './open-webhook-deliverer';

/**
 * `npm run start:webhooks`: delivers the log to the orgs' webhooks (run exactly one, like the
 * projector). Dials out to the event store and the webhooks' URLs only; its checkpoint lives in
 * its data directory, and it derives the webhooks' secrets as the api does (the same
 * ARBOR_WEBHOOK_SECRET, or the api's data directory).
 */
async function main() {
  const config = loadConfig();
  const events = openEventStore(config, console.log);
  const deliverer = await openWebhookDeliverer(events, config, console.log);
  await deliverer.start();
  await runUntilSignalled(async () => {
    await deliverer.stop();
    await events.close();
  });
}

main().catch((error) => {
  console.error(`arbor webhooks: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
