import { deciderSpec } from '../testing/decider-spec';
import { MAX_DELIVERY_ERROR_LENGTH, webhookDeliveryDecider } from './webhook-delivery.decider';
import type { WebhookDeliveryEvent } from './webhook-delivery.events';

const target = { webhook_id: 'hook-1', org_id: 'org-1', event_id: 'event-1', event_type: 'VmBooted', event_position: 42 };
const attempted_at = '2026-11-24T10:00:00.000Z';
const next_attempt_at = '2026-11-24T10:00:05.000Z';
const spec = deciderSpec(webhookDeliveryDecider);
const attempt = (n: number, outcome: { status_code: number | null; error?: string }) => ({
  type: 'RecordWebhookAttempt' as const,
  ...target,
  attempt: n,
  max_attempts: 3,
  succeeded: outcome.error === undefined,
  status_code: outcome.status_code,
  error: outcome.error ?? null,
  attempted_at,
  next_attempt_at,
});
const failedAttempt = (n: number, error = 'HTTP 500: down'): WebhookDeliveryEvent => ({
  type: 'WebhookDeliveryAttemptFailed',
  data: { ...target, attempt: n, status_code: 500, error, attempted_at, next_attempt_at },
});
const delivered = (n: number): WebhookDeliveryEvent => ({ type: 'WebhookDelivered', data: { ...target, attempt: n, status_code: 204, attempted_at } });

describe('webhook delivery decider', () => {
  it('records a 2xx as delivered, at whichever attempt it came', () => {
    spec.given([]).when(attempt(1, { status_code: 204 })).then([delivered(1)]);
    spec.given([failedAttempt(1), failedAttempt(2)]).when(attempt(3, { status_code: 204 })).then([delivered(3)]);
  });

  it('records a failed attempt to be tried again, and gives up after the last one', () => {
    spec.given([]).when(attempt(1, { status_code: 500, error: 'HTTP 500: down' })).then([failedAttempt(1)]);
    spec.given([failedAttempt(1)]).when(attempt(2, { status_code: null, error: 'timed out after 10000 ms' })).then([
      { type: 'WebhookDeliveryAttemptFailed', data: { ...target, attempt: 2, status_code: null, error: 'timed out after 10000 ms', attempted_at, next_attempt_at } },
    ]);
    spec.given([failedAttempt(1), failedAttempt(2)]).when(attempt(3, { status_code: 500, error: 'HTTP 500: down' })).then([
      { type: 'WebhookDeliveryFailed', data: { ...target, attempt: 3, status_code: 500, error: 'HTTP 500: down', attempted_at } },
    ]);
    // A bound lowered since: the next failure ends it.
    spec.given([failedAttempt(1), failedAttempt(2), failedAttempt(3)]).when(attempt(4, { status_code: 500, error: 'x' })).then([
      { type: 'WebhookDeliveryFailed', data: { ...target, attempt: 4, status_code: 500, error: 'x', attempted_at } },
    ]);
  });

  it('records each attempt once and nothing after the end (a restarted deliverer repeating itself)', () => {
    spec.given([failedAttempt(1)]).when(attempt(1, { status_code: 204 })).then([]);
    spec.given([delivered(1)]).when(attempt(2, { status_code: 204 })).then([]);
    spec.given([failedAttempt(1), failedAttempt(2), { type: 'WebhookDeliveryFailed', data: { ...target, attempt: 3, status_code: 500, error: 'x', attempted_at } }])
      .when(attempt(4, { status_code: 204 }))
      .then([]);
    spec.given([]).when(attempt(0, { status_code: 204 })).then([]);
  });

  it('keeps the error short', () => {
    const long = 'x'.repeat(5000);
    spec.given([]).when(attempt(1, { status_code: 500, error: long })).then([failedAttempt(1, long.slice(0, MAX_DELIVERY_ERROR_LENGTH))]);
  });

  it('folds to where the delivery stands', () => {
    const state = (events: WebhookDeliveryEvent[]) => events.reduce(webhookDeliveryDecider.evolve, webhookDeliveryDecider.initialState());
    expect(state([])).toEqual({ status: 'pending', attempts: 0, next_attempt_at: null });
    expect(state([failedAttempt(1), failedAttempt(2)])).toEqual({ status: 'retrying', attempts: 2, next_attempt_at });
    expect(state([failedAttempt(1), delivered(2)])).toEqual({ status: 'delivered', attempts: 2, next_attempt_at: null });
  });
});
