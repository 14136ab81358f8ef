import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvVars, Exec, GuestFile, IdempotentResponse, toFileChunks } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
import { AggregateRepository } from '../aggregate-repository';
import { newCommandContext } from '../command-context';
import { envVarsOf } from '../env-vars';
import { presentEvent, REDACTED } from '../event-presentation';
import { EventSecrets } from './event-secrets';
import { isSealed } from './sealed-value';
import { Secrets } from './secrets';

const now = '2026-11-23T10:00:00.000Z';
const SECRET = 'hunter2-is-not-a-password';

/**
 * Secrets through the aggregate repository: sealed on the way into the log with the org's newest
 * key, opened on the way out for the deciders, redacted in the feed, unreadable once shredded.
 */
describe('EventSecrets: sealed in the log, opened for the domain', () => {
  let dir: string;
  let secrets: Secrets;
  let store: InMemoryEventStore;
  let aggregates: AggregateRepository;
  const org_id = randomUUID();
  const context = () => newCommandContext({ org_id, actor_key_id: 'key-1' });
  /** Every byte the log holds, as JSON: what a copy of it would give away. */
  const rawLog = async () => JSON.stringify(await store.readAll());

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'arbor-event-secrets-'));
    secrets = new Secrets({ dataDir: dir, mongoUrl: null }, {});
    store = new InMemoryEventStore();
    aggregates = new AggregateRepository(store, secrets.events);
  });
  afterEach(async () => {
    await secrets.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('seals env var values, exec stdin and env, file contents and idempotent responses; the domain reads them in clear', async () => {
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { DB_PASSWORD: SECRET }, replace: false, now }, context());
    const exec_id = randomUUID();
    const exec = { type: 'RequestExec' as const, exec_id, vm_id: 'vm-1', org_id, command: ['cat'], env: { TOKEN: `${SECRET}-env` }, working_dir: null, stdin: `${SECRET}-stdin`, timeout_secs: 0, now };
    await aggregates.handle(Exec, exec_id, exec, context());
    const content = Buffer.from(`${SECRET}-file`);
    const [chunk] = toFileChunks(content);
    await aggregates.handle(GuestFile, 'op-1', { type: 'AddFileChunk', op_id: 'op-1', index: 0, data_b64: chunk }, context());
    const record = { org_id, key_hash: 'abc' };
    await aggregates.handle(IdempotentResponse, record, { type: 'RecordIdempotentResponse', method: 'PUT', path: '/api/v1/env_vars', status: 200, body: { vars: { DB_PASSWORD: SECRET } } }, context());

    const raw = await rawLog();
    expect(raw).not.toContain(SECRET);
    expect(raw).not.toContain(chunk);
    expect(raw).toContain('DB_PASSWORD'); // names stay readable
    expect(raw.match(/arbor:sealed:v1:/g)).toHaveLength(5);

    expect(await envVarsOf(aggregates, 'key-1')).toEqual({ DB_PASSWORD: SECRET });
    expect((await aggregates.load(Exec, exec_id)).state.request).toMatchObject({ env: exec.env, stdin: exec.stdin });
    expect((await aggregates.load(GuestFile, 'op-1')).state.chunks).toEqual([chunk]);
    expect((await aggregates.load(IdempotentResponse, record)).state.response?.body).toEqual({ vars: { DB_PASSWORD: SECRET } });
    // A chunk repeated by a retry is compared in clear: the same content is no conflict.
    await aggregates.handle(GuestFile, 'op-1', { type: 'AddFileChunk', op_id: 'op-1', index: 0, data_b64: chunk }, context());
  });

  it('shows sealed fields redacted in the feed: names kept, values never, absent ones null', async () => {
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { A: SECRET, B: 'x' }, replace: true, now }, context());
    const exec_id = randomUUID();
    await aggregates.handle(Exec, exec_id, { type: 'RequestExec', exec_id, vm_id: 'vm-1', org_id, command: ['true'], env: null, working_dir: null, stdin: SECRET, timeout_secs: 0, now }, context());
    const [vars, exec] = (await store.readAll()).map(presentEvent);
    expect(vars.data).toEqual({ owner_id: 'key-1', vars: { A: REDACTED, B: REDACTED }, replace: true, set_at: now });
    expect(exec.data).toMatchObject({ env: null, stdin: REDACTED, command: ['true'] });
  });

  it('reads events written in clear before sealing as they are, and shows them redacted', async () => {
    // An EnvVarsSet of schema version 1, as Arbor wrote it before secrets were sealed.
    await store.append('envvars-key-1', [{ id: randomUUID(), type: 'EnvVarsSet', data: { owner_id: 'key-1', vars: { OLD: SECRET }, replace: false, set_at: now }, metadata: { schema_version: 1, correlation_id: 'c', causation_id: 'c', actor_key_id: 'key-1', org_id } }], 'no_stream');
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { NEW: `${SECRET}-new` }, replace: false, now }, context());

    expect(await envVarsOf(aggregates, 'key-1')).toEqual({ OLD: SECRET, NEW: `${SECRET}-new` });
    const [old, sealed] = await store.readAll();
    expect(old.data).toMatchObject({ vars: { OLD: SECRET } }); // history is never rewritten
    expect(sealed.metadata.schema_version).toBe(2);
    expect(presentEvent(old).data).toMatchObject({ vars: { OLD: REDACTED } });
  });

  it('keeps what was sealed readable across a rotation of the org key, and seals with the new key after it', async () => {
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { A: 'one' }, replace: false, now }, context());
    const [first] = await secrets.orgKeys.list(org_id);
    const rotated = await secrets.orgKeys.rotate(org_id);
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { B: 'two' }, replace: false, now }, context());

    const [a, b] = await store.readAll();
    expect((a.data as { vars: { A: string } }).vars.A).toContain(first.key_id);
    expect((b.data as { vars: { B: string } }).vars.B).toContain(rotated.key_id);
    expect(await envVarsOf(aggregates, 'key-1')).toEqual({ A: 'one', B: 'two' });
  });

  it("makes an org's secrets unreadable for good once its keys are shredded; other orgs keep theirs", async () => {
    const other = randomUUID();
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { A: SECRET }, replace: false, now }, context());
    await aggregates.handle(EnvVars, 'key-2', { type: 'SetEnvVars', owner_id: 'key-2', vars: { B: 'kept' }, replace: false, now }, newCommandContext({ org_id: other, actor_key_id: 'key-2' }));

    expect(await envVarsOf(aggregates, 'key-1')).toEqual({ A: SECRET }); // opened once: the process keeps it a while
    expect(await secrets.orgKeys.shred(org_id)).toHaveLength(1);

    // Every process, this one and a new one alike: the key is read from the store each time.
    const fresh = new Secrets({ dataDir: dir, mongoUrl: null }, {});
    for (const reader of [aggregates, new AggregateRepository(store, fresh.events)]) {
      const { vars } = (await reader.load(EnvVars, 'key-1')).state;
      expect(isSealed(vars.A)).toBe(true);
      expect(await envVarsOf(reader, 'key-1')).toEqual({});
      expect(await envVarsOf(reader, 'key-2')).toEqual({ B: 'kept' });
    }
    await fresh.close();
    // The org seals again with a new key; the old values stay gone.
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { C: 'after' }, replace: false, now }, context());
    expect(await envVarsOf(aggregates, 'key-1')).toEqual({ C: 'after' });
    expect((await secrets.orgKeys.list(org_id)).map((key) => key.key_id)).toHaveLength(1); // only the new one
  });

  it('fails loudly on a key its key store never had, rather than taking the secret for shredded', async () => {
    await aggregates.handle(EnvVars, 'key-1', { type: 'SetEnvVars', owner_id: 'key-1', vars: { A: SECRET }, replace: false, now }, context());
    // A worker given a key store of its own instead of the api's (no MONGODB_URL, another data directory).
    const elsewhere = mkdtempSync(join(tmpdir(), 'arbor-event-secrets-other-'));
    const stranger = new Secrets({ dataDir: elsewhere, mongoUrl: null }, {});
    try {
      await expect(new AggregateRepository(store, stranger.events).load(EnvVars, 'key-1')).rejects.toThrow(/data key .* is not in this process's key store: every api and worker must share one/);
    } finally {
      await stranger.close();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses to write a secret it cannot seal, and to read one that was tampered with', async () => {
    const set = { type: 'SetEnvVars' as const, owner_id: 'key-1', vars: { A: SECRET }, replace: false, now };
    await expect(new AggregateRepository(store, EventSecrets.NONE).handle(EnvVars, 'key-1', set, context())).rejects.toThrow(/EnvVarsSet \(vars\) holds secrets, and this process has no key store/);
    await expect(aggregates.handle(EnvVars, 'key-1', set, newCommandContext({ org_id: null, actor_key_id: null }))).rejects.toThrow(/belongs to no org/);
    expect(await store.readAll()).toEqual([]);

    await aggregates.handle(EnvVars, 'key-1', set, context());
    const [event] = await store.readAll();
    const token = (event.data as { vars: { A: string } }).vars.A;
    const tampered = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    await store.append('envvars-key-9', [{ ...event, id: randomUUID(), data: { ...(event.data as object), vars: { A: tampered } } }], 'no_stream');
    await expect(aggregates.load(EnvVars, 'key-9')).rejects.toThrow(/EnvVarsSet.vars.A of event .* does not open with its key/);
  });
});
