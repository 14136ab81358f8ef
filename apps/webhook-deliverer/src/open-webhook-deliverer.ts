import { join } from 'node:path';
import { type ArborConfig, WebhookSecrets } from '@arbor/application';
import type { EventStore } from '@arbor/event-store';
import type { Log } from '@arbor/observability';
import { WebhookDeliverer } from './webhook-deliverer';

/** The deliverer's checkpoint, in the data directory (with the webhook secret it derives from, unless ARBOR_WEBHOOK_SECRET is set). */
export const DELIVERER_STATE_FILE = join('webhooks', 'deliverer.json');

/** The deliverer on this configuration: its checkpoint, retry settings and the webhooks' secrets. */
export async function openWebhookDeliverer(events: EventStore, config: ArborConfig, log: Log): Promise<WebhookDeliverer> {
  return new WebhookDeliverer(events, {
    stateFile: join(config.dataDir, DELIVERER_STATE_FILE),
    settings: config.webhooks,
    secrets: await WebhookSecrets.load(config),
    log,
  });
}
