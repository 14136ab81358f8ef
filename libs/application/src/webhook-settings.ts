import { booleanSetting, positiveSetting } from './settings';

/** How the webhook deliverer tries: ARBOR_WEBHOOK_ATTEMPTS, ARBOR_WEBHOOK_RETRY_BASE_MS, ARBOR_WEBHOOK_TIMEOUT_MS, ARBOR_WEBHOOK_ALLOW_PRIVATE. */
export interface WebhookSettings {
  /** Tries of one delivery before it is recorded as failed (default 8). */
  attempts: number;
  /** The wait before the second try; each later wait doubles (default 5 s: 5 s, 10 s, … 320 s, ~10.6 min in all). */
  retryBaseMs: number;
  /** How long one request may take, answer included (default 10 s). */
  timeoutMs: number;
  /** Whether webhooks may call loopback, private and link-local addresses (default false: the host's own services and its neighbours are off limits to a tenant's URL). */
  allowPrivate: boolean;
}

/** No wait between two tries is longer than an hour, whatever the settings make of it. */
export const MAX_WEBHOOK_RETRY_DELAY_MS = 3_600_000;

export function loadWebhookSettings(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  return {
    attempts: positiveSetting(env, 'ARBOR_WEBHOOK_ATTEMPTS', 8),
    retryBaseMs: positiveSetting(env, 'ARBOR_WEBHOOK_RETRY_BASE_MS', 5_000),
    timeoutMs: positiveSetting(env, 'ARBOR_WEBHOOK_TIMEOUT_MS', 10_000),
    allowPrivate: booleanSetting(env, 'ARBOR_WEBHOOK_ALLOW_PRIVATE', false),
  };
}

/**
 * The wait after failed attempt `attempt` (1-based): `retryBaseMs × 2^(attempt-1)`, capped, less
 * up to a fifth at random (`random` in [0, 1)), so deliveries that failed together do not all
 * come back at the same moment.
 */
export function webhookRetryDelayMs(settings: Pick<WebhookSettings, 'retryBaseMs'>, attempt: number, random: number = Math.random()): number {
  const delay = Math.min(MAX_WEBHOOK_RETRY_DELAY_MS, settings.retryBaseMs * 2 ** (attempt - 1));
  return Math.round(delay * (1 - random / 5));
}
