import { createHmac } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { isDeliverableEventType, UUID_PATTERN } from '@arbor/domain';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';
import { pollUntil } from '../support/poll-until';
import { type ReceivedDelivery, WebhookReceiver } from '../support/webhook-receiver';

/** What a receiver does with a delivery, in a few lines (the README shows the same): Standard Webhooks. */
function verifySignature(secret: string, delivery: ReceivedDelivery): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = `v1,${createHmac('sha256', key).update(`${delivery.id}.${delivery.timestamp}.${delivery.body}`).digest('base64')}`;
  const fresh = Math.abs(Date.now() / 1000 - Number(delivery.timestamp)) <= 300;
  return fresh && delivery.signature.split(' ').includes(expected);
}

/**
 * Webhooks over HTTP (`/arbor/v1/webhooks`) in the embedded process (api, projector, worker and
 * the deliverer): registration with its secret shown once, the org wall, bad input, and signed
 * deliveries of every event of the org to a receiver that fails for a while.
 */
describe('webhooks (HTTP, embedded deliverer)', () => {
  let arbor: TestArbor;
  const receivers: WebhookReceiver[] = [];
  const newReceiver = async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    return receiver;
  };
  /** A key of a new org of its own, so its log and its webhooks start empty. */
  const newOrg = async () => {
    const { key, org_id } = await issueKeyForNewOrg(arbor.infra.eventStore);
    const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => arbor.request(method, path, { key, body, headers });
    return { key, org_id, call };
  };

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_WEBHOOK_ATTEMPTS: '10', ARBOR_WEBHOOK_RETRY_BASE_MS: '40', ARBOR_WEBHOOK_TIMEOUT_MS: '3000', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await arbor?.destroy();
  });

  it('registers a webhook: 201 with its signing secret, shown once; listed and read back without it', async () => {
    const { call } = await newOrg();
    const receiver = await newReceiver();
    const created = await call('POST', '/arbor/v1/webhooks', { url: receiver.url, event_types: ['EnvVarsSet', 'EnvVarDeleted'], description: 'audit sink' });
    expect(created.status).toBe(201);
    const { secret, ...webhook } = created.json;
    expect(webhook).toEqual({ webhook_id: expect.stringMatching(UUID_PATTERN), url: receiver.url, event_types: ['EnvVarsSet', 'EnvVarDeleted'], description: 'audit sink', created_at: expect.any(String) });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    expect((await call('GET', '/arbor/v1/webhooks')).json).toEqual({ webhooks: [webhook] });
    expect((await call('GET', `/arbor/v1/webhooks/${webhook.webhook_id}`)).json).toEqual(webhook);
    expect((await call('GET', `/arbor/v1/webhooks/${webhook.webhook_id}/deliveries`)).json).toEqual({ deliveries: [] });

    const everything = await call('POST', '/arbor/v1/webhooks', { url: `${receiver.url}/all` });
    expect(everything.status).toBe(201);
    expect(everything.json).toMatchObject({ event_types: ['*'], description: null });
    expect(everything.json.secret).not.toBe(secret);
    expect((await call('GET', '/arbor/v1/webhooks')).json.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([webhook.webhook_id, everything.json.webhook_id]);

    const openApi = (await arbor.request('GET', '/api/docs-json', { key: null })).json;
    expect(Object.keys(openApi.paths)).toEqual(expect.arrayContaining(['/arbor/v1/webhooks', '/arbor/v1/webhooks/{webhook_id}', '/arbor/v1/webhooks/{webhook_id}/deliveries']));
    expect(openApi.components.schemas.RegisteredWebhookDto.properties).toHaveProperty('secret');
  });

  it.each([
    ['no url', 422, { event_types: ['*'] }, 'url: missing field `url`'],
    ['a url that is not a string', 422, { url: 42 }, 'url must be a string'],
    ['event_types that is not a list', 422, { url: 'https://hooks.example.com/', event_types: 'VmBooted' }, 'event_types must be an array of event type names'],
    ['a relative url', 400, { url: '/hooks' }, "url must be an absolute http or https URL (got '/hooks')"],
    ['an ftp url', 400, { url: 'ftp://hooks.example.com/' }, 'url must be an absolute http or https URL (got a ftp: URL)'],
    ['a url with credentials', 400, { url: 'https://me:pw@hooks.example.com/' }, 'url must not carry a user or password'],
    ['unknown event types', 400, { url: 'https://hooks.example.com/', event_types: ['VmBooted', 'VmExploded', 'Nope'] }, 'unknown event type(s): VmExploded, Nope'],
    ['a webhook event type', 400, { url: 'https://hooks.example.com/', event_types: ['WebhookDelivered'] }, 'event type(s) never delivered to webhooks: WebhookDelivered'],
    ['no event types', 400, { url: 'https://hooks.example.com/', event_types: [] }, 'event_types must name at least one event type'],
  ])('refuses %s with %d, naming what is wrong, and appends nothing', async (_, status, body, message) => {
    const { call } = await newOrg();
    const before = await arbor.infra.eventStore.headPosition();
    const res = await call('POST', '/arbor/v1/webhooks', body);
    expect(res.status).toBe(status);
    expect(res.json).toMatchObject({ success: false, error: expect.stringContaining(message) });
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  });

  it('refuses a path id that is not a UUID (400) and bad deliveries queries (400)', async () => {
    const { call } = await newOrg();
    expect((await call('GET', '/arbor/v1/webhooks/not-a-uuid')).status).toBe(400);
    const { webhook_id } = (await call('POST', '/arbor/v1/webhooks', { url: 'https://hooks.example.com/' })).json;
    expect((await call('GET', `/arbor/v1/webhooks/${webhook_id}/deliveries?limit=0`)).status).toBe(400);
    expect((await call('GET', `/arbor/v1/webhooks/${webhook_id}/deliveries?status=lost`)).status).toBe(400);
  });

  it("walls orgs off: another org's webhook answers 404 on every route, and no list shows it", async () => {
    const owner = await newOrg();
    const other = await newOrg();
    const { webhook_id } = (await owner.call('POST', '/arbor/v1/webhooks', { url: 'https://hooks.example.com/' })).json;
    for (const [method, path] of [['GET', `/arbor/v1/webhooks/${webhook_id}`], ['GET', `/arbor/v1/webhooks/${webhook_id}/deliveries`], ['DELETE', `/arbor/v1/webhooks/${webhook_id}`]]) {
      const res = await other.call(method, path);
      expect({ method, path, status: res.status, error: res.json?.error }).toEqual({ method, path, status: 404, error: 'webhook not found' });
    }
    expect((await other.call('GET', '/arbor/v1/webhooks')).json).toEqual({ webhooks: [] });
    expect((await owner.call('GET', `/arbor/v1/webhooks/${webhook_id}`)).status).toBe(200);
    expect((await arbor.request('GET', '/arbor/v1/webhooks', { key: null })).status).toBe(401);
  });

  it('a registration retried with its X-Idempotency-Key answers the same webhook and secret; no secret is in the log', async () => {
    const { call } = await newOrg();
    const body = { url: 'https://hooks.example.com/idempotent' };
    const first = await call('POST', '/arbor/v1/webhooks', body, { 'x-idempotency-key': 'register-once' });
    const again = await call('POST', '/arbor/v1/webhooks', body, { 'x-idempotency-key': 'register-once' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect((await call('GET', '/arbor/v1/webhooks')).json.webhooks).toHaveLength(1);
    const log = JSON.stringify(await arbor.infra.eventStore.readAll());
    expect(log).toContain(first.json.webhook_id);
    expect(log).not.toContain(first.json.secret.slice('whsec_'.length));
  });

  it('delivers every later event of the org, signed, as the feed shows it, through a receiver failing for a while: each arrives, exactly once by its id', async () => {
    const { call, org_id } = await newOrg();
    const receiver = await newReceiver();
    receiver.answer = (n) => ({ status: n <= 6 ? 500 : 200 });
    const created = (await call('POST', '/arbor/v1/webhooks', { url: receiver.url, event_types: ['*'] })).json;
    const registeredAt = (await arbor.infra.eventStore.readAll()).find((e) => e.type === 'WebhookRegistered' && (e.data as { webhook_id: string }).webhook_id === created.webhook_id)!.position;

    for (let i = 0; i < 5; i++) expect((await call('PUT', '/api/v1/env_vars', { vars: { [`VAR_${i}`]: `value ${i}` } })).status).toBe(200);
    expect((await call('DELETE', '/api/v1/env_vars/VAR_0')).status).toBe(204);
    expect((await call('POST', '/api/v1/repositories', { name: 'hooks-demo' })).status).toBe(201);
    const expected = (await arbor.infra.eventStore.readAll({ after_position: registeredAt }))
      .filter((e) => e.metadata.org_id === org_id && isDeliverableEventType(e.type))
      .map((e) => e.id);
    expect(expected).toHaveLength(7); // 5 EnvVarsSet, EnvVarDeleted, RepositoryCreated
    await pollUntil(async () => expected.every((id) => receiver.ids().has(id)), { timeoutMs: 30_000 });

    expect([...receiver.ids()].sort()).toEqual([...expected].sort()); // exactly these, once each by id
    expect(receiver.received.length).toBeGreaterThan(expected.length); // the 500s were tried again
    for (const delivery of receiver.received) expect({ n: delivery.n, verified: verifySignature(created.secret, delivery) }).toEqual({ n: delivery.n, verified: true });

    // The body is the feed's item for the event.
    const feed = (await call('GET', `/api/v1/events?after=${registeredAt}&limit=1000`)).json.events as { event_id: string }[];
    for (const [id, body] of receiver.bodies()) expect(JSON.parse(body)).toEqual(feed.find((item) => item.event_id === id));

    // The deliveries read back, newest first; those the receiver refused show their attempts.
    const deliveriesPath = `/arbor/v1/webhooks/${created.webhook_id}/deliveries`;
    await pollUntil(async () => {
      const { deliveries } = (await call('GET', deliveriesPath)).json;
      return deliveries.length === expected.length && deliveries.every((d: { status: string }) => d.status === 'delivered');
    });
    const { deliveries } = (await call('GET', deliveriesPath)).json;
    expect(deliveries.map((d: { event_id: string }) => d.event_id).sort()).toEqual([...expected].sort());
    expect(deliveries.map((d: { event_position: number }) => d.event_position)).toEqual([...deliveries.map((d: { event_position: number }) => d.event_position)].sort((a, b) => b - a));
    const retried = deliveries.filter((d: { attempts: number }) => d.attempts > 1);
    expect(retried.length).toBeGreaterThan(0);
    expect(retried[0]).toMatchObject({ status: 'delivered', status_code: 200, last_error: 'HTTP 500: receiver says 500', next_attempt_at: null });
    expect(Date.parse(retried[0].last_attempt_at)).toBeGreaterThan(Date.parse(retried[0].first_attempt_at));
    const page = (await call('GET', `${deliveriesPath}?limit=2`)).json.deliveries;
    expect(page).toEqual(deliveries.slice(0, 2));
    expect((await call('GET', `${deliveriesPath}?limit=2&before=${page[1].event_position}`)).json.deliveries).toEqual(deliveries.slice(2, 4));
    expect((await call('GET', `${deliveriesPath}?status=failed`)).json.deliveries).toEqual([]);

    // The delivery records are the org's own events in its feed, and never delivered themselves.
    const after = (await call('GET', `/api/v1/events?after=${registeredAt}&limit=1000`)).json.events as { type: string }[];
    expect(after.filter((e) => e.type === 'WebhookDelivered')).toHaveLength(expected.length);
    expect([...receiver.ids()].sort()).toEqual([...expected].sort());
  });

  it('DELETE: 204, then 404 everywhere, and nothing more is delivered to it', async () => {
    const { call } = await newOrg();
    const gone = await newReceiver();
    const kept = await newReceiver();
    const deleted = (await call('POST', '/arbor/v1/webhooks', { url: gone.url, event_types: ['EnvVarsSet'] })).json;
    await call('POST', '/arbor/v1/webhooks', { url: kept.url, event_types: ['EnvVarsSet'] });
    await call('PUT', '/api/v1/env_vars', { vars: { BEFORE: '1' } });
    await pollUntil(async () => gone.ids().size === 1 && kept.ids().size === 1);

    expect((await call('DELETE', `/arbor/v1/webhooks/${deleted.webhook_id}`)).status).toBe(204);
    expect((await call('GET', `/arbor/v1/webhooks/${deleted.webhook_id}`)).status).toBe(404);
    expect((await call('GET', `/arbor/v1/webhooks/${deleted.webhook_id}/deliveries`)).status).toBe(404);
    expect((await call('DELETE', `/arbor/v1/webhooks/${deleted.webhook_id}`)).status).toBe(404);
    expect((await call('GET', '/arbor/v1/webhooks')).json.webhooks).toHaveLength(1);

    await call('PUT', '/api/v1/env_vars', { vars: { AFTER: '1' } });
    await pollUntil(async () => kept.ids().size === 2);
    await arbor.webhooks.idle();
    expect(gone.ids().size).toBe(1);
  });
});

describe('webhooks to private destinations (HTTP, default settings)', () => {
  let arbor: TestArbor;
  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
  });
  afterAll(async () => {
    await arbor?.destroy();
  });

  it.each([
    ['loopback', 'http://127.0.0.1:3000/api/v1/vms', '127.0.0.1 is a private address'],
    ['localhost', 'http://localhost:2113/', 'localhost is the host itself'],
    ['IPv6 loopback', 'http://[::1]/', '::1 is a private address'],
    ['a private network', 'https://10.0.0.7/hook', '10.0.0.7 is a private address'],
    ['cloud metadata (link-local)', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a private address'],
  ])('refuses %s with 400 and appends nothing', async (_, url, reason) => {
    const { key } = await issueKeyForNewOrg(arbor.infra.eventStore);
    const before = await arbor.infra.eventStore.headPosition();
    const res = await arbor.request('POST', '/arbor/v1/webhooks', { key, body: { url } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ success: false, error: `url: ${reason}; webhooks may not call the host or private networks (an operator may allow it with ARBOR_WEBHOOK_ALLOW_PRIVATE=true)` });
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  });
});
