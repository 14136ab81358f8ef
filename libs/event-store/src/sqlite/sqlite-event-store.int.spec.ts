import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { type EventStore, type NewEvent, type RecordedEvent, WrongExpectedVersionError } from '../event-store.port';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { SqliteEventStore } from './sqlite-event-store';

const newEvent = (type = 'SqliteTestEvent', data: unknown = { at: type }): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: 'org-test' },
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arbor-sqlite-es-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// Every test of the contract reopens one file, so each one runs on a log that others have filled.
describeEventStoreContract('sqlite', async () => SqliteEventStore.open(join(dir, 'contract.db')));

describe('SqliteEventStore specifics', () => {
  const opened: EventStore[] = [];
  const openStore = (file: string, options?: { pollIntervalMs?: number }) => {
    const store = SqliteEventStore.open(join(dir, file), options);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  it('starts a new log at head -1 and gives the first event position 1', async () => {
    const store = openStore(`${randomUUID()}.db`);
    expect(await store.headPosition()).toBe(-1);
    expect(await store.readAll()).toEqual([]);

    const result = await store.append('vm-1', [newEvent()], 'no_stream');

    expect(result).toEqual({ next_expected_revision: 0, position: 1 });
    expect(await store.headPosition()).toBe(1);
  });

  it('keeps every acknowledged event across close and reopen', async () => {
    const file = `${randomUUID()}.db`;
    const first = openStore(file);
    await first.append('vm-1', [newEvent('VmCreated', { nested: { ok: '✓' } }), newEvent('VmBooted')], 'no_stream');
    await first.append('vm-2', [newEvent('VmCreated')], 'no_stream');
    const written = await first.readAll();
    await first.close();

    const reopened = openStore(file);

    expect(await reopened.readAll()).toEqual(written);
    expect(await reopened.headPosition()).toBe(written[2].position);
    await expect(reopened.append('vm-1', [newEvent()], 0)).rejects.toBeInstanceOf(WrongExpectedVersionError);
    const next = await reopened.append('vm-1', [newEvent()], 1);
    expect(next.position).toBeGreaterThan(written[2].position);
  });

  it('goes on with a log made before positions were plain rowids (AUTOINCREMENT), after its last position', async () => {
    const file = `${randomUUID()}.db`;
    const older = new Database(join(dir, file));
    older.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
      event_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (stream_id, revision))`);
    older
      .prepare('INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata, created_at) VALUES (41, ?, 0, ?, ?, ?, ?, ?)')
      .run('vm-1', randomUUID(), 'VmCreated', '{}', JSON.stringify(newEvent().metadata), new Date().toISOString());
    older.close();

    const store = openStore(file);
    const next = await store.append('vm-1', [newEvent('VmBooted')], 0);

    expect(next).toEqual({ next_expected_revision: 1, position: 42 });
    expect((await store.readStream('vm-1')).map((event) => [event.type, event.position])).toEqual([['VmCreated', 41], ['VmBooted', 42]]);
  });

  it('commits the appends of one turn together, each refused or accepted on its own (group commit)', async () => {
    const store = openStore(`${randomUUID()}.db`);
    await store.append('vm-1', [newEvent()], 'no_stream');
    const [a, conflict, b, again] = await Promise.allSettled([
      store.append('vm-1', [newEvent('A')], 0),
      store.append('vm-1', [newEvent('lost')], 0),
      store.append('vm-2', [newEvent('B1'), newEvent('B2')], 'no_stream'),
      store.append('vm-1', [newEvent('C')], 1),
    ]);

    expect([a.status, conflict.status, b.status, again.status]).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((conflict as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedVersionError);
    expect((await store.readStream('vm-1')).map((event) => event.type)).toEqual(['SqliteTestEvent', 'A', 'C']);
    expect((await store.readStream('vm-2')).map((event) => event.type)).toEqual(['B1', 'B2']);
  });

  it('commits appends made just before close instead of dropping them', async () => {
    const file = `${randomUUID()}.db`;
    const store = openStore(file);
    const acknowledged = store.append('vm-1', [newEvent('VmCreated')], 'no_stream');
    await store.close();
    await acknowledged;

    expect((await openStore(file).readStream('vm-1')).map((event) => event.type)).toEqual(['VmCreated']);
  });

  it('fails every append of a group whose transaction cannot start, writing none of them', async () => {
    const file = `${randomUUID()}.db`;
    const store = SqliteEventStore.open(join(dir, file), { busyTimeoutMs: 50 });
    opened.push(store);
    const holder = new Database(join(dir, file));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const outcomes = await Promise.allSettled([store.append('vm-1', [newEvent()], 'no_stream'), store.append('vm-2', [newEvent()], 'no_stream')]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await store.readAll()).toEqual([]);
  });

  it('puts the file in WAL mode, so other processes can read while one writes', () => {
    const file = `${randomUUID()}.db`;
    openStore(file);

    const raw = new Database(join(dir, file), { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('wakes its own subscriptions on its own appends, without waiting for a poll', async () => {
    const store = openStore(`${randomUUID()}.db`, { pollIntervalMs: 3_600_000 });
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    const waiting = iterator.next();

    const { position } = await store.append('vm-1', [newEvent('VmCreated')], 'no_stream');

    expect(((await waiting).value as RecordedEvent).position).toBe(position);
    await subscription.unsubscribe();
  });

  describe('two instances on one file (as two processes would be)', () => {
    let file: string;
    let api: EventStore;
    let worker: EventStore;
    beforeEach(() => {
      file = `${randomUUID()}.db`;
      api = openStore(file);
      worker = openStore(file);
    });

    it("reads each other's appends", async () => {
      const created = await api.append('vm-1', [newEvent('VmCreated')], 'no_stream');
      const booted = await worker.append('vm-1', [newEvent('VmBooted')], created.next_expected_revision);

      expect((await api.readStream('vm-1')).map((event) => event.type)).toEqual(['VmCreated', 'VmBooted']);
      expect((await worker.readAll()).map((event) => event.position)).toEqual([created.position, booted.position]);
      expect(await api.headPosition()).toBe(booted.position);
    });

    it('holds optimistic concurrency and idempotent retries across them', async () => {
      await api.append('vm-1', [newEvent('VmCreated')], 'no_stream');
      const fromApi = [newEvent('VmDeleted')];
      const fromWorker = [newEvent('VmBooted')];

      const won = await api.append('vm-1', fromApi, 0);
      const lost = worker.append('vm-1', fromWorker, 0);

      await expect(lost).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(lost).rejects.toMatchObject({ actual: 1 });
      expect(await worker.append('vm-1', fromApi, 0)).toEqual(won);
      expect(await worker.readStream('vm-1')).toHaveLength(2);
    });

    it("delivers the other instance's appends to a subscription, by polling", async () => {
      const subscription = api.subscribeToAll();
      const iterator = subscription[Symbol.asyncIterator]();
      const first = iterator.next();

      const appended = await worker.append('vm-1', [newEvent('VmCreated'), newEvent('VmBooted')], 'no_stream');
      const delivered = [(await first).value as RecordedEvent, (await iterator.next()).value as RecordedEvent];
      const third = iterator.next();
      const later = await worker.append('vm-1', [newEvent('VmDeleted')], 1);
      delivered.push((await third).value as RecordedEvent);
      await subscription.unsubscribe();

      expect(delivered.map((event) => event.type)).toEqual(['VmCreated', 'VmBooted', 'VmDeleted']);
      expect(delivered.map((event) => event.position)).toEqual([appended.position - 1, appended.position, later.position]);
      expect((await iterator.next()).done).toBe(true);
    });
  });

  describe('separate processes on one file', () => {
    const increments = 100;

    /**
     * Each child loads the adapter's TypeScript through @swc/core (the compiler the tests use),
     * says it is ready, waits for a Go event in the log (so both start together), then adds
     * `increments` events to one shared counter stream, reading the revision and appending with it
     * exactly, retrying on conflicts: a lost update or a reused revision would show.
     */
    const childScript = `
      const { readFileSync } = require('node:fs');
      const swc = require('@swc/core');
      require.extensions['.ts'] = (module, filename) => {
        const options = { filename, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } };
        module._compile(swc.transformSync(readFileSync(filename, 'utf8'), options).code, filename);
      };
      const { randomUUID } = require('node:crypto');
      const { SqliteEventStore } = require(process.env.ADAPTER);
      const { WrongExpectedVersionError } = require(process.env.PORT);
      (async () => {
        const store = SqliteEventStore.open(process.env.FILE);
        process.stdout.write('ready\\n');
        for await (const event of store.subscribeToAll()) if (event.type === 'Go') break;
        const metadata = { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: null };
        for (let i = 0; i < Number(process.env.INCREMENTS); i++) {
          for (;;) {
            const [last] = await store.readStream('counter', { direction: 'backwards', max_count: 1 });
            const event = { id: randomUUID(), type: 'CounterIncremented', data: { by: process.env.NAME, i }, metadata };
            await new Promise((decided) => setTimeout(decided, Math.random() * 2)); // a command deciding
            try {
              await store.append('counter', [event], last ? last.revision : 'no_stream');
              break;
            } catch (error) {
              if (!(error instanceof WrongExpectedVersionError)) throw error;
            }
          }
        }
        await store.close();
      })().catch((error) => { console.error(error); process.exit(1); });
    `;
    const startChild = (file: string, name: string) => {
      const child = spawn(process.execPath, ['-e', childScript], {
        cwd: resolve(__dirname, '../../../..'),
        env: {
          ...process.env,
          ADAPTER: resolve(__dirname, 'sqlite-event-store.ts'),
          PORT: resolve(__dirname, '../event-store.port.ts'),
          FILE: join(dir, file),
          INCREMENTS: String(increments),
          NAME: name,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const ready = new Promise<void>((resolveReady) =>
        child.stdout.on('data', (chunk) => {
          stdout += chunk;
          if (stdout.startsWith('ready\n')) resolveReady();
        }),
      );
      const exited = new Promise<string>((resolveExit, rejectExit) =>
        child.on('exit', (code) => (code === 0 ? resolveExit(stdout) : rejectExit(new Error(`child ${name} exited ${code}: ${stderr}`)))),
      );
      // A child that dies before it is ready must fail the test, not leave it waiting.
      return { ready: Promise.race([ready, exited.then(() => undefined)]), exited };
    };

    it('lose no update under contention, and a subscriber here sees every event once, in order', async () => {
      const file = `${randomUUID()}.db`;
      const observer = openStore(file);
      const subscription = observer.subscribeToAll();

      const delivered: RecordedEvent[] = [];
      const watching = (async () => {
        for await (const event of subscription) {
          delivered.push(event);
          if (delivered.filter((seen) => seen.stream_id === 'counter').length === 2 * increments) break;
        }
      })();
      const children = [startChild(file, 'a'), startChild(file, 'b')];
      await Promise.all(children.map((child) => child.ready));
      await observer.append('control', [newEvent('Go')], 'no_stream');
      await Promise.all(children.map((child) => child.exited));
      await watching;

      const counter = await observer.readStream('counter');
      expect(counter.map((event) => event.revision)).toEqual(Array.from({ length: 2 * increments }, (_, index) => index));
      for (const name of ['a', 'b']) {
        const own = counter.filter((event) => (event.data as { by: string }).by === name);
        expect(own.map((event) => (event.data as { i: number }).i)).toEqual(Array.from({ length: increments }, (_, index) => index));
      }
      expect(delivered.map((event) => event.id)).toEqual((await observer.readAll()).map((event) => event.id));
      delivered.slice(1).forEach((event, index) => expect(event.position).toBeGreaterThan(delivered[index].position));
    });
  });
});
