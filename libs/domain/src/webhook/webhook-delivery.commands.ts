import type { DomainCommand } from '../shared/decider';
import type { WebhookDeliveryTarget } from './webhook-delivery.events';

/**
 * The outcome of one attempt: `status_code` and `error` null together for a 2xx answer.
 * `max_attempts`: the deliverer's bound (a failed attempt at it ends the delivery);
 * `next_attempt_at`: when a failed attempt short of it is tried again.
 */
export type RecordWebhookAttempt = DomainCommand<
  'RecordWebhookAttempt',
  WebhookDeliveryTarget & {
    attempt: number;
    max_attempts: number;
    succeeded: boolean;
    status_code: number | null;
    error: string | null;
    attempted_at: string;
    next_attempt_at: string;
  }
>;
export type WebhookDeliveryCommand = RecordWebhookAttempt;
