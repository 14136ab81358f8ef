import { EVENT_CATALOGUE } from '../catalogue/event-catalogue';

/**
 * The aggregates (by their name in the table of aggregates) whose events no webhook receives:
 * the webhooks' own (a delivery of a delivery would never end) and the idempotency records
 * (bookkeeping, left out of the feed too).
 */
export const UNDELIVERED_AGGREGATES: ReadonlySet<string> = new Set(['Webhook', 'WebhookDelivery', 'IdempotentResponse']);

/** `"*"` in a webhook's event types: every type it may receive. */
export const ALL_EVENT_TYPES = '*';

/** Whether events of `type` go to webhooks: a catalogue type of an aggregate not left out. */
export function isDeliverableEventType(type: string): boolean {
  return Object.hasOwn(EVENT_CATALOGUE, type) && !UNDELIVERED_AGGREGATES.has(EVENT_CATALOGUE[type].aggregate);
}

/** Whether a webhook with these event types receives an event of `type`. */
export function webhookWants(event_types: readonly string[], type: string): boolean {
  return isDeliverableEventType(type) && (event_types.includes(ALL_EVENT_TYPES) || event_types.includes(type));
}
