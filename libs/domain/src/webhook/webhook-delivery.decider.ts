import type { Decider } from '../shared/decider';
import { invalid } from '../shared/domain-error';
import type { WebhookDeliveryCommand } from './webhook-delivery.commands';
import type { WebhookDeliveryEvent } from './webhook-delivery.events';

export type WebhookDeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface WebhookDeliveryState {
  status: WebhookDeliveryStatus;
  /** Attempts recorded so far. */
  attempts: number;
  /** When the next attempt is due (while retrying). */
  next_attempt_at: string | null;
}

/** What the receiver's answer was, for the record: at most this many characters of the error. */
export const MAX_DELIVERY_ERROR_LENGTH = 1024;

/**
 * Attempts are recorded in order, once each: an attempt already recorded (a restarted deliverer
 * trying it again), or any attempt once the delivery has ended, appends nothing. A 2xx ends it
 * (WebhookDelivered); a failure at `max_attempts` ends it too (WebhookDeliveryFailed); any other
 * failure is tried again at `next_attempt_at` (a failure past a lowered bound ends it as well).
 */
function decide(command: WebhookDeliveryCommand, state: WebhookDeliveryState): WebhookDeliveryEvent[] {
  const { type: _, attempt, max_attempts, succeeded, status_code, error, attempted_at, next_attempt_at, ...target } = command;
  if (state.status === 'delivered' || state.status === 'failed' || attempt !== state.attempts + 1) return [];
  if (!Number.isInteger(attempt) || attempt < 1) throw invalid(`attempt ${attempt} is not a positive whole number`);
  if (succeeded) return [{ type: 'WebhookDelivered', data: { ...target, attempt, status_code: status_code!, attempted_at } }];
  const reason = (error ?? `HTTP ${status_code}`).slice(0, MAX_DELIVERY_ERROR_LENGTH);
  if (attempt >= max_attempts) return [{ type: 'WebhookDeliveryFailed', data: { ...target, attempt, status_code, error: reason, attempted_at } }];
  return [{ type: 'WebhookDeliveryAttemptFailed', data: { ...target, attempt, status_code, error: reason, attempted_at, next_attempt_at } }];
}

function evolve(state: WebhookDeliveryState, event: WebhookDeliveryEvent): WebhookDeliveryState {
  switch (event.type) {
    case 'WebhookDeliveryAttemptFailed':
      return { status: 'retrying', attempts: event.data.attempt, next_attempt_at: event.data.next_attempt_at };
    case 'WebhookDelivered':
      return { status: 'delivered', attempts: event.data.attempt, next_attempt_at: null };
    case 'WebhookDeliveryFailed':
      return { status: 'failed', attempts: event.data.attempt, next_attempt_at: null };
  }
}

export const webhookDeliveryDecider: Decider<WebhookDeliveryCommand, WebhookDeliveryState, WebhookDeliveryEvent> = {
  initialState: () => ({ status: 'pending', attempts: 0, next_attempt_at: null }),
  decide,
  evolve,
};
