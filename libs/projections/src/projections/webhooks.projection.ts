import { Webhook, WebhookDelivery, type WebhookDeliveryEvent, type WebhookEvent } from '@arbor/domain';
import {
  WEBHOOK_DELIVERIES_COLLECTION,
  WEBHOOKS_COLLECTION,
  webhookDeliveryKey,
  type WebhookDeliveryDocument,
  type WebhookDocument,
  type WriteOp,
} from '@arbor/read-models';
import type { Projection } from './projection';

const STATUS_OF = { WebhookDeliveryAttemptFailed: 'retrying', WebhookDelivered: 'delivered', WebhookDeliveryFailed: 'failed' } as const;

/**
 * The `webhooks` and `webhook_deliveries` read models: an org's webhooks, and where each delivery
 * to them stands (one document per event and webhook, updated by each recorded attempt). A
 * webhook's deliveries go with it; an attempt recorded after its webhook was deleted (one that
 * was under way) leaves nothing behind.
 */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  collections: [WEBHOOKS_COLLECTION, WEBHOOK_DELIVERIES_COLLECTION],
  aggregates: [Webhook, WebhookDelivery],
  indexes: [
    { collection: WEBHOOKS_COLLECTION, keys: { org_id: 1, created_at: 1 } },
    { collection: WEBHOOK_DELIVERIES_COLLECTION, keys: { webhook_id: 1, event_position: -1 } },
  ],
  async project(event: WebhookEvent | WebhookDeliveryEvent, _recorded, reads): Promise<WriteOp[]> {
    switch (event.type) {
      case 'WebhookRegistered': {
        const { webhook_id, org_id, url, event_types, description, registered_at } = event.data;
        const doc: WebhookDocument = { _id: webhook_id, webhook_id, org_id, url, event_types, description, created_at: registered_at };
        return [{ op: 'replaceOne', collection: WEBHOOKS_COLLECTION, filter: { _id: webhook_id }, doc, upsert: true }];
      }
      case 'WebhookDeleted':
        return [
          { op: 'deleteMany', collection: WEBHOOK_DELIVERIES_COLLECTION, filter: { webhook_id: event.data.webhook_id } },
          { op: 'deleteOne', collection: WEBHOOKS_COLLECTION, filter: { _id: event.data.webhook_id } },
        ];
    }
    const { webhook_id, org_id, event_id, event_type, event_position, attempt, status_code, attempted_at } = event.data;
    if (!(await reads.findOne<WebhookDocument>(WEBHOOKS_COLLECTION, { _id: webhook_id }))) return [];
    const fields: Partial<WebhookDeliveryDocument> = {
      webhook_id, org_id, event_id, event_type, event_position, status: STATUS_OF[event.type], attempts: attempt, status_code, last_attempt_at: attempted_at, next_attempt_at: null,
    };
    const onInsert: Partial<WebhookDeliveryDocument> = { first_attempt_at: attempted_at };
    if (event.type === 'WebhookDelivered') onInsert.last_error = null; // a success keeps the error of the attempt before it, if any
    else fields.last_error = event.data.error;
    if (event.type === 'WebhookDeliveryAttemptFailed') fields.next_attempt_at = event.data.next_attempt_at;
    const update = { $set: fields, $setOnInsert: onInsert };
    return [{ op: 'updateOne', collection: WEBHOOK_DELIVERIES_COLLECTION, filter: { _id: webhookDeliveryKey(webhook_id, event_id) }, update, upsert: true }];
  },
};
