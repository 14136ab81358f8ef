/** Collection `webhooks`: one document per live webhook, `_id` = webhook id. */
export const WEBHOOKS_COLLECTION = 'webhooks';

export interface WebhookDocument {
  _id: string;
  webhook_id: string;
  org_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  created_at: string;
  [field: string]: unknown;
}

/**
 * Collection `webhook_deliveries`: one document per recorded delivery (an event to a webhook),
 * `_id` = `<webhook id>:<event id>`, from its first recorded attempt on; removed with its webhook.
 */
export const WEBHOOK_DELIVERIES_COLLECTION = 'webhook_deliveries';

export interface WebhookDeliveryDocument {
  _id: string;
  webhook_id: string;
  org_id: string;
  event_id: string;
  event_type: string;
  event_position: number;
  /** `retrying` (an attempt failed, another is due), `delivered` or `failed` (given up). */
  status: 'retrying' | 'delivered' | 'failed';
  attempts: number;
  /** The last answer's HTTP status (null: none came). */
  status_code: number | null;
  last_error: string | null;
  first_attempt_at: string;
  last_attempt_at: string;
  next_attempt_at: string | null;
  [field: string]: unknown;
}

export const webhookDeliveryKey = (webhook_id: string, event_id: string) => `${webhook_id}:${event_id}`;
