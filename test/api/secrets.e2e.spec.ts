import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AggregateRepository, EVENTS_DB, isSealed, Secrets } from '@arbor/application';
import { EnvVars, Exec, GuestFile, sealedFieldsOf } from '@arbor/domain';
import { runAdmin } from '../../apps/admin/src/run-admin';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';
import { SseFollower } from '../support/sse-client';
import { WebhookReceiver } from '../support/webhook-receiver';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Secrets nobody could find in the log by chance. */
const secret = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;

/**
 * Secrets kept out of the log (sandbox driver, embedded: api, projector, worker, webhook deliverer):
 * env var values, an exec's env and stdin, file contents go into the log only sealed with the
 * org's key; the VM still gets them in clear; the feed, the live stream, the export and webhook
 * deliveries show them redacted; once the org's keys are shredded nothing in the log opens.
 */
describe('secrets out of the log (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let receiver: WebhookReceiver;
  let stream: SseFollower;
  let orgId: string;
  let vm: string;
  const values = { envVar: secret('env-var'), execEnv: secret('exec-env'), stdin: secret('stdin'), file: secret('file') };
  /** Every form a secret could take in the log: as written, and base64'd (file contents and exec output travel so). */
  const forms = (text: string) => [text, Buffer.from(text).toString('base64'), Buffer.from(text).toString('base64url')];
  const allForms = () => Object.values(values).flatMap(forms);
  const expectNoSecretIn = (what: string, text: string) => {
    for (const form of allForms()) expect({ what, found: text.includes(form) ? form : null }).toEqual({ what, found: null });
  };
  /** The guest's own view, through the driver (not the log). */
  const inGuest = async (script: string) => {
    let out = '';
    await arbor.driver.exec(vm, { argv: ['sh', '-c', script] }, (chunk) => (out += chunk.data.toString()));
    return out;
  };
  /** Every item of the feed, page by page, as the operator key sees it. */
  const wholeFeed = async () => {
    const items: unknown[] = [];
    for (let after = -1; ; ) {
      const page = (await arbor.request('GET', `/api/v1/events?after=${after}&limit=1000`)).json;
      items.push(...page.events);
      if (!page.has_more) return items as { type: string; data: Record<string, unknown> }[];
      after = page.next_after;
    }
  };

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' } }); // the receiver is local
    orgId = ((await arbor.infra.eventStore.readAll()).find((e) => e.type === 'SystemBootstrapped')!.data as { org_id: string }).org_id;
    receiver = await WebhookReceiver.start();
    expect((await arbor.request('POST', '/arbor/v1/webhooks', { body: { url: receiver.url } })).status).toBe(201);
    stream = new SseFollower(`${arbor.url}/api/v1/events/stream`, { key: arbor.adminKey });

    // A PUT /env_vars answered (and recorded for its X-Idempotency-Key) with the values themselves.
    const put = await arbor.request('PUT', '/api/v1/env_vars', { body: { vars: { DB_PASSWORD: values.envVar } }, headers: { 'x-idempotency-key': randomUUID() } });
    expect(put.json).toEqual({ vars: { DB_PASSWORD: values.envVar } });
    vm = await arbor.bootVm({ mem_size_mib: 256 });
  }, 300_000);
  afterAll(async () => {
    await stream?.close();
    await receiver?.close();
    await arbor?.destroy();
  });

  it('gives the VM env var values, exec env and stdin and file contents in clear, and the log only sealed ones', async () => {
    const exec = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, {
      body: { command: ['sh', '-c', 'printf %s "$DB_PASSWORD" | sha256sum; printf %s "$TOKEN" | sha256sum; sha256sum'], env: { TOKEN: values.execEnv }, stdin: values.stdin },
    });
    expect(exec.status).toBe(200);
    // The guest saw each value exactly (its output shows hashes only: exec output is not sealed).
    expect(exec.json.stdout.split('\n').map((line: string) => line.split(' ')[0])).toEqual([sha256(values.envVar), sha256(values.execEnv), sha256(values.stdin), '']);

    const upload = await arbor.request('PUT', `/api/v1/vm/${vm}/files`, { body: { path: '/root/secret.txt', content_b64: Buffer.from(values.file).toString('base64'), mode: 0o600 } });
    expect(upload.status).toBe(200);
    expect(await inGuest('cat /root/secret.txt')).toBe(values.file);
    const read = await arbor.request('GET', `/api/v1/vm/${vm}/files?path=/root/secret.txt`);
    expect(Buffer.from(read.json.content_b64, 'base64').toString()).toBe(values.file); // read back through the log, sealed there too

    // The log through the event store port, and the bytes of its database on disk.
    const log = await arbor.infra.eventStore.readAll();
    expectNoSecretIn('$all', JSON.stringify(log));
    const onDisk = ['', '-wal'].map((suffix) => join(arbor.config.dataDir, EVENTS_DB + suffix)).filter(existsSync).map((file) => readFileSync(file).toString('latin1')).join('');
    expectNoSecretIn('events.db', onDisk);
    // Each secret is there, sealed, where it belongs.
    const sealedOf = (type: string) => log.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
    expect(sealedOf('EnvVarsSet')[0].vars).toEqual({ DB_PASSWORD: expect.stringMatching(/^arbor:sealed:v1:/) });
    expect(sealedOf('VmCreationRequested').find((d) => d.vm_id === vm)!.env).toEqual({ DB_PASSWORD: expect.stringMatching(/^arbor:sealed:v1:/) });
    expect(sealedOf('ExecRequested').at(-1)).toMatchObject({ env: { TOKEN: expect.stringMatching(/^arbor:sealed:v1:/) }, stdin: expect.stringMatching(/^arbor:sealed:v1:/) });
    expect(sealedOf('FileContentChunk').every((d) => isSealed(d.data_b64))).toBe(true);
    expect(sealedOf('IdempotentResponseRecorded').every((d) => isSealed(d.body))).toBe(true);
  }, 120_000);

  it('shows them redacted in the feed, the live stream, the export and webhook deliveries', async () => {
    const head = await arbor.infra.eventStore.headPosition();
    const feed = await wholeFeed();
    expectNoSecretIn('feed', JSON.stringify(feed));
    expect(feed.find((e) => e.type === 'EnvVarsSet')!.data.vars).toEqual({ DB_PASSWORD: '[redacted]' });
    expect(feed.filter((e) => e.type === 'ExecRequested').at(-1)!.data).toMatchObject({ env: { TOKEN: '[redacted]' }, stdin: '[redacted]' });
    expect(feed.filter((e) => e.type === 'FileContentChunk').every((e) => e.data.data_b64 === '[redacted]')).toBe(true);

    const exported = await arbor.request('GET', '/api/v1/events/export');
    expect(exported.status).toBe(200);
    expectNoSecretIn('export', exported.text);

    await stream.until((s) => Number(s.lastEventId) >= head!);
    expectNoSecretIn('stream', JSON.stringify(stream.messages));
    expect(stream.messages.some((m) => m.event === 'ExecRequested')).toBe(true);

    const delivered = (types: string[]) => [...receiver.bodies().values()].filter((body) => types.includes(JSON.parse(body).type));
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 60_000;
      const check = () => (delivered(['EnvVarsSet', 'ExecRequested', 'FileContentChunk']).length >= 4 ? resolve() : Date.now() > deadline ? reject(new Error('no deliveries')) : setTimeout(check, 100));
      check();
    });
    expectNoSecretIn('webhooks', JSON.stringify(receiver.received));
  }, 120_000);

  it('reads env vars written in clear before they were sealed, and shows them redacted', async () => {
    const org = await issueKeyForNewOrg(arbor.infra.eventStore);
    const old = secret('written-in-clear');
    // As Arbor wrote EnvVarsSet before secrets were sealed: schema version 1, the values in clear.
    const metadata = { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: org.key_id, org_id: org.org_id };
    await arbor.infra.eventStore.append(EnvVars.stream(org.key_id), [{ id: randomUUID(), type: 'EnvVarsSet', data: { owner_id: org.key_id, vars: { OLD: old }, replace: false, set_at: new Date().toISOString() }, metadata }], 'no_stream');

    expect((await arbor.request('PUT', '/api/v1/env_vars', { key: org.key, body: { vars: { NEW: 'sealed' } } })).json).toEqual({ vars: { OLD: old, NEW: 'sealed' } });
    const feed = (await arbor.request('GET', '/api/v1/events?type=EnvVarsSet&limit=1000', { key: org.key })).json.events;
    expect(feed.map((e: { data: unknown }) => e.data)).toEqual([expect.objectContaining({ vars: { OLD: '[redacted]' } }), expect.objectContaining({ vars: { NEW: '[redacted]' } })]);
    expect(feed.map((e: { metadata: { schema_version: number } }) => e.metadata.schema_version)).toEqual([2, 2]); // the old one upcast
  });

  it("makes them unrecoverable from the log once the org's keys are shredded, other orgs keeping theirs", async () => {
    const other = await issueKeyForNewOrg(arbor.infra.eventStore);
    await arbor.request('PUT', '/api/v1/env_vars', { key: other.key, body: { vars: { KEPT: 'other org' } } });
    const out: string[] = [];
    await expect(runAdmin(['secrets', 'shred', '--org', orgId], arbor.infra, { line: (l) => out.push(l) })).rejects.toThrow(/Add --yes/);
    await runAdmin(['secrets', 'shred', '--org', orgId, '--yes'], arbor.infra, { line: (l) => out.push(l) });
    expect(out[0]).toMatch(new RegExp(`^org ${orgId}: deleted 1 data key\\(s\\)`));

    // Everything the installation has (log, key store, secrets key) opens none of it any more.
    const fresh = new Secrets(arbor.config, {});
    try {
      const opened = await fresh.events.open(await arbor.infra.eventStore.readAll());
      expectNoSecretIn('the opened log', JSON.stringify(opened));
      const ours = opened.filter((e) => e.metadata.org_id === orgId && sealedFieldsOf(e.type).length);
      expect(ours.length).toBeGreaterThan(5);
      const reader = new AggregateRepository(arbor.infra.eventStore, fresh.events);
      expect((await reader.load(EnvVars, arbor.adminKey.slice(0, 36))).state.vars.DB_PASSWORD).toMatch(/^arbor:sealed:v1:/);
      const exec = opened.filter((e) => e.type === 'ExecRequested' && e.metadata.org_id === orgId).at(-1)!;
      expect(isSealed((await reader.loadStream(Exec, exec.stream_id)).state.request!.stdin)).toBe(true);
      const chunk = opened.find((e) => e.type === 'FileContentChunk' && e.metadata.org_id === orgId)!;
      expect((await reader.load(GuestFile, (chunk.data as { op_id: string }).op_id)).state.chunks.every(isSealed)).toBe(true);
    } finally {
      await fresh.close();
    }
    expect((await arbor.request('GET', '/api/v1/env_vars')).json).toEqual({ vars: {} });
    expect((await arbor.request('GET', '/api/v1/env_vars', { key: other.key })).json).toEqual({ vars: { KEPT: 'other org' } });
    // The org goes on: what it seals now gets a new key.
    expect((await arbor.request('PUT', '/api/v1/env_vars', { body: { vars: { AFTER: 'shred' } } })).json).toEqual({ vars: { AFTER: 'shred' } });
  }, 60_000);
});
