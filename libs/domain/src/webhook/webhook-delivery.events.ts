import { eventTypes, type DomainEvent } from '../shared/decider';

/** Which event went to which webhook: every delivery event carries it. */
export interface WebhookDeliveryTarget {
  webhook_id: string;
  org_id: string;
  /** The delivered event: its id (the receiver's de-duplication key), type and log position. */
  event_id: string;
  event_type: string;
  event_position: number;
}

/**
 * Stream `webhookdelivery-<webhook id>-<event id>`: one event's delivery to one webhook, at most
 * one event an attempt: the attempts that failed and are tried again, then WebhookDelivered or,
 * after the last attempt, WebhookDeliveryFailed. Short streams, so a restarted deliverer reads
 * where each delivery stands at once; none of them is ever delivered to a webhook.
 */
export type WebhookDeliveryAttemptFailed = DomainEvent<
  'WebhookDeliveryAttemptFailed',
  WebhookDeliveryTarget & {
    /** 1 for the first try. */
    attempt: number;
    /** The receiver's HTTP status, or null when none came (refused, timed out, a bad address). */
    status_code: number | null;
    /** What went wrong, with the start of the receiver's answer. */
    error: string;
    attempted_at: string;
    /** When the next attempt is due. */
    next_attempt_at: string;
  }
>;
/** A 2xx answer to an attempt: the delivery is done. */
export type WebhookDelivered = DomainEvent<'WebhookDelivered', WebhookDeliveryTarget & { attempt: number; status_code: number; attempted_at: string }>;
/** The last attempt failed too: the delivery is given up (the event stays in the feed). */
export type WebhookDeliveryFailed = DomainEvent<
  'WebhookDeliveryFailed',
  WebhookDeliveryTarget & { attempt: number; status_code: number | null; error: string; attempted_at: string }
>;

export type WebhookDeliveryEvent = WebhookDeliveryAttemptFailed | WebhookDelivered | WebhookDeliveryFailed;
export const WEBHOOK_DELIVERY_EVENT_TYPES = eventTypes<WebhookDeliveryEvent>()('WebhookDeliveryAttemptFailed', 'WebhookDelivered', 'WebhookDeliveryFailed');
