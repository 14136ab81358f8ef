import { createHmac, timingSafeEqual } from 'node:crypto';

/** How a webhook's signing secret is written: `whsec_` and the key's bytes in base64 (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** How far a delivery's timestamp may be from the receiver's clock (against replays): 5 minutes. */
export const WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** The headers of a signed delivery. */
export interface WebhookSignatureHeaders {
  /** The delivered event's id: the same on every attempt, the receiver's de-duplication key. */
  'webhook-id': string;
  /** Unix seconds when this attempt was signed. */
  'webhook-timestamp': string;
  /** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` (space-separated when there are several). */
  'webhook-signature': string;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
}

/**
 * The signature of a delivery, as Standard Webhooks (the scheme of Svix and others, with
 * libraries for most languages) defines it: HMAC-SHA256, keyed with the secret's bytes, of
 * `<id>.<timestamp>.<body>`, in base64, versioned `v1,`.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function webhookSignatureHeaders(secret: string, id: string, timestamp: number, body: string): WebhookSignatureHeaders {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, id, timestamp, body) };
}

/**
 * What a receiver checks: one of the header's signatures is the body's, made with the secret,
 * and the timestamp is within the tolerance of `nowSeconds`. Compared in constant time.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookSignatureHeaders,
  body: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  const timestamp = Number(headers['webhook-timestamp']);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(timestamp) || Math.abs(now - timestamp) > (options.toleranceSeconds ?? WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signWebhook(secret, headers['webhook-id'], timestamp, body));
  return headers['webhook-signature'].split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
