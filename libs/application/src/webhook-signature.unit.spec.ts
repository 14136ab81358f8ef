import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookSecrets } from './webhook-secrets';
import { loadWebhookSettings, MAX_WEBHOOK_RETRY_DELAY_MS, webhookRetryDelayMs } from './webhook-settings';
import { signWebhook, verifyWebhook, webhookSignatureHeaders } from './webhook-signature';

// The test vector published with the Standard Webhooks specification: matching it means any of
// that specification's libraries verifies Arbor's deliveries.
const vector = { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330, body: '{"test": 2432232314}' };

describe('webhook signatures (Standard Webhooks)', () => {
  it('signs "<id>.<timestamp>.<body>" with HMAC-SHA256 of the secret, as the specification does', () => {
    expect(signWebhook(vector.secret, vector.id, vector.timestamp, vector.body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(webhookSignatureHeaders(vector.secret, vector.id, vector.timestamp, vector.body)).toEqual({
      'webhook-id': vector.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('verifies a delivery within the tolerance; refuses another body, id, secret or an old timestamp', () => {
    const headers = webhookSignatureHeaders(vector.secret, vector.id, vector.timestamp, vector.body);
    const at = { nowSeconds: vector.timestamp + 60 };
    expect(verifyWebhook(vector.secret, headers, vector.body, at)).toBe(true);
    expect(verifyWebhook(vector.secret, headers, '{"test": 2432232315}', at)).toBe(false);
    expect(verifyWebhook(vector.secret, { ...headers, 'webhook-id': 'msg_other' }, vector.body, at)).toBe(false);
    expect(verifyWebhook('whsec_c2VjcmV0LW9mLWFub3RoZXItZW5kcG9pbnQ=', headers, vector.body, at)).toBe(false);
    expect(verifyWebhook(vector.secret, headers, vector.body, { nowSeconds: vector.timestamp + 301 })).toBe(false);
    expect(verifyWebhook(vector.secret, { ...headers, 'webhook-timestamp': 'soon' }, vector.body, at)).toBe(false);
    // Several signatures (a receiver rotating secrets): one that matches is enough.
    expect(verifyWebhook(vector.secret, { ...headers, 'webhook-signature': `v1,bm9wZQ== ${headers['webhook-signature']}` }, vector.body, at)).toBe(true);
  });
});

describe('webhook secrets', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'arbor-webhook-secret-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('derives one whsec_ secret per webhook from the server secret, the same in every process', async () => {
    const secrets = await WebhookSecrets.load({ dataDir }, {});
    const again = await WebhookSecrets.load({ dataDir }, {});
    expect(secrets.secretOf('hook-1')).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(again.secretOf('hook-1')).toBe(secrets.secretOf('hook-1'));
    expect(secrets.secretOf('hook-2')).not.toBe(secrets.secretOf('hook-1'));
    expect(readFileSync(join(dataDir, 'webhook-secret'), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
  });

  it('takes the server secret from ARBOR_WEBHOOK_SECRET when set, refusing a short one', async () => {
    const fromEnv = await WebhookSecrets.load({ dataDir }, { ARBOR_WEBHOOK_SECRET: 'ab'.repeat(32) });
    expect(fromEnv.secretOf('hook-1')).not.toBe((await WebhookSecrets.load({ dataDir }, {})).secretOf('hook-1'));
    await expect(WebhookSecrets.load({ dataDir }, { ARBOR_WEBHOOK_SECRET: 'abcd' })).rejects.toThrow('ARBOR_WEBHOOK_SECRET must be at least 32 bytes as hex');
  });
});

describe('webhook retries', () => {
  it('wait twice as long after each failed attempt, less up to a fifth at random, capped at an hour', () => {
    const settings = loadWebhookSettings({});
    expect(settings).toEqual({ attempts: 8, retryBaseMs: 5_000, timeoutMs: 10_000, allowPrivate: false });
    expect([1, 2, 3, 7].map((attempt) => webhookRetryDelayMs(settings, attempt, 0))).toEqual([5_000, 10_000, 20_000, 320_000]);
    expect(webhookRetryDelayMs(settings, 2, 0.999)).toBeGreaterThan(8_000);
    expect(webhookRetryDelayMs(settings, 40, 0)).toBe(MAX_WEBHOOK_RETRY_DELAY_MS);
  });

  it('are configured by the environment, refusing nonsense', () => {
    expect(loadWebhookSettings({ ARBOR_WEBHOOK_ATTEMPTS: '3', ARBOR_WEBHOOK_RETRY_BASE_MS: '50', ARBOR_WEBHOOK_TIMEOUT_MS: '2000', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' })).toEqual({ attempts: 3, retryBaseMs: 50, timeoutMs: 2000, allowPrivate: true });
    expect(() => loadWebhookSettings({ ARBOR_WEBHOOK_ATTEMPTS: '0' })).toThrow('ARBOR_WEBHOOK_ATTEMPTS must be a positive whole number (got "0")');
  });
});
