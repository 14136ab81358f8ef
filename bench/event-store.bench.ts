import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { type NewEvent, SqliteEventStore } from '@arbor/event-store';
import { report, timed } from './stats';

const event = (i: number): NewEvent => ({
  id: randomUUID(),
  type: 'BenchEvent',
  data: { i, payload: 'x'.repeat(64) },
  metadata: { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: 'bench' },
});

/** Append throughput of the embedded SQLite event store (WAL, synchronous=FULL). */
export async function benchEventStore(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-es-'));
  const store = SqliteEventStore.open(join(dir, 'events.db'));
  try {
    const single = 3000;
    const [, singleMs] = await timed(async () => {
      for (let i = 0; i < single; i++) await store.append(`bench-${i % 100}`, [event(i)], 'any');
    });
    const batches = 1000;
    const [, batchMs] = await timed(async () => {
      for (let b = 0; b < batches; b++) await store.append(`batch-${b % 1000}`, Array.from({ length: 100 }, (_, i) => event(i)), 'any');
    });
    const [all, readMs] = await timed(() => store.readAll({ max_count: 200_000 }));
    console.log('event store (SQLite, embedded)');
    report([
      ['append, 1 event per append (fsync each)', `${Math.round(single / (singleMs / 1000))} events/s`],
      ['append, batches of 100', `${Math.round((batches * 100) / (batchMs / 1000))} events/s`],
      [`read $all (${all.length} events)`, `${Math.round(all.length / (readMs / 1000))} events/s`],
    ]);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
