import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `webhook-<id>`: an org's webhook endpoint. From its registration on, every event of the
 * org whose type it names is POSTed to its URL, signed with the endpoint's secret; the secret is
 * derived from a server secret and the webhook id, so it is in no event.
 */
export type WebhookRegistered = DomainEvent<
  'WebhookRegistered',
  {
    webhook_id: string;
    org_id: string;
    /** An absolute http(s) URL without credentials. */
    url: string;
    /** The event types delivered, or `["*"]` for every type a webhook may receive. */
    event_types: string[];
    description: string | null;
    registered_at: string;
  }
>;
/** Nothing more is delivered to it; deliveries still being retried are given up. */
export type WebhookDeleted = DomainEvent<'WebhookDeleted', { webhook_id: string; org_id: string; deleted_at: string }>;

export type WebhookEvent = WebhookRegistered | WebhookDeleted;
export const WEBHOOK_EVENT_TYPES = eventTypes<WebhookEvent>()('WebhookRegistered', 'WebhookDeleted');
