import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AggregateRepository, newCommandContext, presentEvent, REDACTED, Secrets, verifyWebhook, waitUntil, type WebhookSignatureHeaders } from '@arbor/application';
import { ApiKey, EnvVars, generateApiKey, Webhook, WebhookDelivery } from '@arbor/domain';
import { InMemoryEventStore, type RecordedEvent } from '@arbor/event-store';
import { delivererStateFile } from './deliverer-state-file';
import { WebhookDeliverer, type WebhookDelivererOptions } from './webhook-deliverer';
import type { WebhookRequest, WebhookResponse } from './webhook-sender';

const now = '2026-11-24T10:00:00.000Z';
const secrets = { secretOf: (webhook_id: string) => `whsec_${Buffer.from(`secret of ${webhook_id}`).toString('base64')}` };
const OK: WebhookResponse = { ok: true, status_code: 204 };
const DOWN: WebhookResponse = { ok: false, status_code: 500, error: 'HTTP 500: down' };

/** The deliverer on an in-memory log, POSTing to a stub that answers as each test says. */
describe('webhook deliverer', () => {
  let store: InMemoryEventStore;
  let aggregates: AggregateRepository;
  let keyStore: Secrets;
  let dir: string;
  let stateFile: string;
  let deliverer: WebhookDeliverer | null;
  let requests: (WebhookRequest & { at: number })[];
  let answer: (request: WebhookRequest) => WebhookResponse | Promise<WebhookResponse>;

  const start = async (options: Partial<WebhookDelivererOptions> = {}) => {
    deliverer = new WebhookDeliverer(store, {
      stateFile,
      settings: { attempts: 3, retryBaseMs: 20, timeoutMs: 1000, allowPrivate: true },
      secrets,
      send: async (request) => {
        requests.push({ ...request, at: Date.now() });
        return answer(request);
      },
      ...options,
    });
    await deliverer.start();
  };
  const stop = async () => {
    await deliverer?.stop();
    deliverer = null;
  };
  const register = async (webhook_id: string, org_id: string, event_types = ['*']) => {
    const command = { type: 'RegisterWebhook' as const, webhook_id, org_id, url: `http://hooks.test/${webhook_id}`, event_types, description: null, now };
    await aggregates.handle(Webhook, webhook_id, command, newCommandContext({ org_id, actor_key_id: 'key-1' }));
  };
  /** An EnvVarsSet of the org: the event appended. */
  const setVar = async (org_id: string, key = 'A'): Promise<RecordedEvent> => {
    const owner_id = `owner-${org_id}`;
    const { position } = await aggregates.handle(EnvVars, owner_id, { type: 'SetEnvVars', owner_id, vars: { [key]: '1' }, replace: false, now }, newCommandContext({ org_id, actor_key_id: 'key-1' }));
    return (await store.readAll({ after_position: position! - 1, max_count: 1 }))[0];
  };
  const deliveryOf = async (webhook_id: string, event: RecordedEvent) => store.readStream(WebhookDelivery.stream({ webhook_id, event_id: event.id }));
  const typesOf = async (webhook_id: string, event: RecordedEvent) => (await deliveryOf(webhook_id, event)).map((e) => e.type);
  const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) => waitUntil(what, async () => probe(), { timeoutMs: 5000 });
  const to = (webhook_id: string) => requests.filter((r) => r.url.endsWith(webhook_id));
  const checkpoint = async () => delivererStateFile(stateFile).read();

  beforeEach(() => {
    store = new InMemoryEventStore();
    dir = mkdtempSync(join(tmpdir(), 'arbor-deliverer-'));
    keyStore = new Secrets({ dataDir: dir, mongoUrl: null }, {});
    aggregates = new AggregateRepository(store, keyStore.events);
    stateFile = join(dir, 'webhooks', 'deliverer.json');
    requests = [];
    answer = () => OK;
    deliverer = null;
  });
  afterEach(async () => {
    await stop();
    await keyStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("POSTs each later event of the org to its webhooks that want its type, signed, as the feed shows it, and records it", async () => {
    const before = await setVar('org-1', 'EARLY');
    await register('hook-vars', 'org-1', ['EnvVarsSet']);
    await register('hook-keys', 'org-1', ['ApiKeyIssued']);
    await register('hook-all-2', 'org-2', ['*']);
    const vars1 = await setVar('org-1');
    const { key_id, secret_sha256 } = generateApiKey();
    await aggregates.handle(ApiKey, key_id, { type: 'IssueApiKey', key_id, org_id: 'org-1', user_id: 'user-1', label: 'ci', secret_sha256, is_operator: false, now }, newCommandContext({ org_id: 'org-1', actor_key_id: null }));
    const vars2 = await setVar('org-2');
    await start();
    await until('three deliveries', () => requests.length === 3 || undefined);
    await deliverer!.idle();

    expect(to('hook-vars').map((r) => JSON.parse(r.body).event_id)).toEqual([vars1.id]);
    expect(to('hook-all-2').map((r) => JSON.parse(r.body).event_id)).toEqual([vars2.id]); // not org-1's, not a webhook's own events
    const keyDelivery = JSON.parse(to('hook-keys')[0].body);
    expect(keyDelivery).toMatchObject({ type: 'ApiKeyIssued', data: { key_id, secret_sha256: REDACTED } });

    const [request] = to('hook-vars');
    expect(request.body).toBe(JSON.stringify(presentEvent(vars1)));
    expect(JSON.parse(request.body).data.vars).toEqual({ A: REDACTED }); // sealed in the log, never shown
    expect(request.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': vars1.id });
    expect(verifyWebhook(secrets.secretOf('hook-vars'), request.headers as unknown as WebhookSignatureHeaders, request.body)).toBe(true);
    expect(verifyWebhook(secrets.secretOf('hook-keys'), request.headers as unknown as WebhookSignatureHeaders, request.body)).toBe(false);

    const [delivered] = await deliveryOf('hook-vars', vars1);
    expect(delivered).toMatchObject({ type: 'WebhookDelivered', data: { webhook_id: 'hook-vars', event_id: vars1.id, event_type: 'EnvVarsSet', event_position: vars1.position, attempt: 1, status_code: 204 } });
    expect(delivered.metadata).toMatchObject({ causation_id: vars1.id, correlation_id: vars1.metadata.correlation_id, org_id: 'org-1', actor_key_id: null });
    expect(await typesOf('hook-vars', before)).toEqual([]);
    await until('the checkpoint at the head', async () => (await checkpoint()).position === (await store.headPosition()) || undefined);
    expect((await checkpoint()).webhooks.map((w) => w.webhook_id).sort()).toEqual(['hook-all-2', 'hook-keys', 'hook-vars']);
  });

  it('tries a failing webhook again, waiting twice as long each time, and gives up after the last attempt', async () => {
    await register('hook-flaky', 'org-1');
    await register('hook-down', 'org-1');
    let flakyCalls = 0;
    answer = (request) => (request.url.endsWith('hook-down') ? DOWN : ++flakyCalls <= 2 ? { ok: false, status_code: null, error: 'no answer within 1000 ms' } : OK);
    const event = await setVar('org-1');
    await start();
    await until('both deliveries ended', async () => ((await typesOf('hook-down', event)).length === 3 && (await typesOf('hook-flaky', event)).length === 3) || undefined);

    expect(await typesOf('hook-flaky', event)).toEqual(['WebhookDeliveryAttemptFailed', 'WebhookDeliveryAttemptFailed', 'WebhookDelivered']);
    expect(await typesOf('hook-down', event)).toEqual(['WebhookDeliveryAttemptFailed', 'WebhookDeliveryAttemptFailed', 'WebhookDeliveryFailed']);
    const [first, , failed] = await deliveryOf('hook-down', event);
    expect(first.data).toMatchObject({ attempt: 1, status_code: 500, error: 'HTTP 500: down' });
    expect(failed.data).toMatchObject({ attempt: 3, status_code: 500, error: 'HTTP 500: down' });
    const times = to('hook-down').map((r) => r.at);
    expect(times).toHaveLength(3);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(15); // 20 ms, less up to a fifth
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(31); // 40 ms, less up to a fifth
    expect(new Set(to('hook-down').map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));
  });

  it('a webhook that does not answer holds up no other, nor its own other events beyond its concurrency', async () => {
    await register('hook-slow', 'org-1');
    await register('hook-fast', 'org-1');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    answer = async (request) => {
      if (request.url.endsWith('hook-slow')) await released;
      return OK;
    };
    const events = [await setVar('org-1', 'A'), await setVar('org-1', 'B'), await setVar('org-1', 'C')];
    await start({ concurrencyPerWebhook: 2 });
    await until('every event at the fast webhook', () => to('hook-fast').length === 3 || undefined);
    expect(to('hook-slow')).toHaveLength(2);
    release();
    await deliverer!.idle();
    expect(to('hook-slow').map((r) => r.headers['webhook-id']).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('moves its checkpoint only past recorded deliveries: a restart carries each one on from its stream', async () => {
    await register('hook-1', 'org-1');
    answer = () => DOWN;
    const event = await setVar('org-1');
    await start({ settings: { attempts: 3, retryBaseMs: 300, timeoutMs: 1000, allowPrivate: true } });
    await until('the first attempt recorded', async () => (await typesOf('hook-1', event)).length === 1 || undefined);
    await stop();
    expect((await checkpoint()).position ?? -1).toBeLessThan(event.position);

    answer = () => OK;
    await start({ settings: { attempts: 3, retryBaseMs: 300, timeoutMs: 1000, allowPrivate: true } });
    await until('delivered', async () => (await typesOf('hook-1', event)).includes('WebhookDelivered') || undefined);
    expect(await typesOf('hook-1', event)).toEqual(['WebhookDeliveryAttemptFailed', 'WebhookDelivered']);
    expect((await deliveryOf('hook-1', event))[1].data).toMatchObject({ attempt: 2 });
    expect(requests).toHaveLength(2);
    // The second attempt waited for the time the first one set, across the restart.
    const firstFailure = (await deliveryOf('hook-1', event))[0].data as { next_attempt_at: string };
    expect(requests[1].at).toBeGreaterThanOrEqual(Date.parse(firstFailure.next_attempt_at));
    await until('the checkpoint past it', async () => ((await checkpoint()).position ?? -1) >= event.position || undefined);

    // Even with the checkpoint lost, an ended delivery is not sent again.
    await stop();
    rmSync(stateFile);
    await start();
    await until('the log replayed', async () => (await checkpoint()).position === (await store.headPosition()) || undefined);
    expect(requests).toHaveLength(2);
  });

  it("gives up a deleted webhook's deliveries, sends it nothing more, and moves on", async () => {
    await register('hook-1', 'org-1');
    answer = () => DOWN;
    const event = await setVar('org-1');
    await start({ settings: { attempts: 5, retryBaseMs: 60_000, timeoutMs: 1000, allowPrivate: true } });
    await until('the first attempt recorded', async () => (await typesOf('hook-1', event)).length === 1 || undefined);
    await aggregates.handle(Webhook, 'hook-1', { type: 'DeleteWebhook', org_id: 'org-1', now }, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }));
    await setVar('org-1', 'AFTER');
    await until('the checkpoint at the head', async () => (await checkpoint()).position === (await store.headPosition()) || undefined);
    expect(requests).toHaveLength(1);
    expect((await checkpoint()).webhooks).toEqual([]);
  });
});
