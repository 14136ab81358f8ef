import type { WebhookDeliveryDto, WebhookDto } from '@arbor/contracts';
import type { WebhookDeliveryDocument, WebhookDocument } from '@arbor/read-models';

export function presentWebhook(doc: WebhookDocument): WebhookDto {
  return { webhook_id: doc.webhook_id, url: doc.url, event_types: doc.event_types, description: doc.description, created_at: doc.created_at };
}

export function presentDelivery(doc: WebhookDeliveryDocument): WebhookDeliveryDto {
  const { event_id, event_type, event_position, status, attempts, status_code, last_error, first_attempt_at, last_attempt_at, next_attempt_at } = doc;
  return { event_id, event_type, event_position, status, attempts, status_code, last_error, first_attempt_at, last_attempt_at, next_attempt_at };
}
