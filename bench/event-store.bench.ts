import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { type NewEvent, SqliteEventStore } from '@arbor/event-store';
import { report, timed } from './stats';

const event = (i: number): NewEvent => ({
  id: randomUUID(),
  type: 'BenchEvent',
  data: { i, payload: 'x'.repeat(64) },
  metadata: { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: 'bench' },
});

/** The floor: one fsync'd INSERT per transaction, in the same WAL/synchronous=FULL mode, on the same disk. */
function openRawSqlite(file: string): { insert: (count: number) => Promise<number>; close: () => void } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const statement = db.prepare('INSERT INTO t (body) VALUES (?)');
  const body = JSON.stringify(event(0));
  return {
    /** Makes `count` inserts, each its own transaction (one fsync each); resolves to the ms taken. */
    insert: async (count) => (await timed(async () => {
      for (let i = 0; i < count; i++) statement.run(body);
    }))[1],
    close: () => db.close(),
  };
}

/** Append throughput of the embedded SQLite event store (WAL, synchronous=FULL), against raw SQLite on the same disk. */
export async function benchEventStore(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-es-'));
  const store = SqliteEventStore.open(join(dir, 'events.db'));
  try {
    // The floor and the appends take turns in rounds, so that both meet the disk in the same state
    // (its fsync time drifts by ×2 over a minute here) and the ratio compares like with like.
    const rounds = 6;
    const perRound = 500;
    const raw = openRawSqlite(join(dir, 'raw.db'));
    let rawMs = 0;
    let singleMs = 0;
    for (let round = 0; round < rounds; round++) {
      rawMs += await raw.insert(perRound);
      singleMs += (
        await timed(async () => {
          for (let i = 0; i < perRound; i++) await store.append(`bench-${i % 100}`, [event(i)], 'any');
        })
      )[1];
    }
    raw.close();
    const rawPerSecond = (rounds * perRound) / (rawMs / 1000);
    const appendsPerSecond = (rounds * perRound) / (singleMs / 1000);
    // 50 writers, each appending one event at a time and waiting for it: group commit shares fsyncs.
    const writers = 50;
    const perWriter = 200;
    const [, concurrentMs] = await timed(() =>
      Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < perWriter; i++) await store.append(`writer-${w}`, [event(i)], i === 0 ? 'no_stream' : i - 1);
        }),
      ),
    );
    const batches = 1000;
    const [, batchMs] = await timed(async () => {
      for (let b = 0; b < batches; b++) await store.append(`batch-${b % 1000}`, Array.from({ length: 100 }, (_, i) => event(i)), 'any');
    });
    const [all, readMs] = await timed(() => store.readAll({ max_count: 200_000 }));
    console.log('event store (SQLite, embedded)');
    report([
      ['raw SQLite, 1 fsync\'d INSERT per transaction', `${Math.round(rawPerSecond)} inserts/s`],
      [
        `append, 1 event per append (fsync each; ${rounds} rounds taking turns with raw)`,
        `${Math.round(appendsPerSecond)} events/s (${(appendsPerSecond / rawPerSecond).toFixed(2)}× raw; goal ≥ 0.7×)`,
      ],
      [`append, ${writers} concurrent writers, 1 event each`, `${Math.round((writers * perWriter) / (concurrentMs / 1000))} events/s (group commit)`],
      ['append, batches of 100', `${Math.round((batches * 100) / (batchMs / 1000))} events/s`],
      [`read $all (${all.length} events)`, `${Math.round(all.length / (readMs / 1000))} events/s`],
    ]);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
