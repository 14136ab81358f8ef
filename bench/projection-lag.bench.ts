import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext, PROJECTOR_CHECKPOINT } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { SqliteEventStore } from '@arbor/event-store';
import { SqliteReadModelStore } from '@arbor/read-models';
import { ALL_PROJECTIONS, Projector } from '@arbor/projections';
import { formatMs, percentile, report } from './stats';

/** Time from an append's acknowledgement until the projector's checkpoint has passed it: one writer, then many. */
export async function benchProjectionLag(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-lag-'));
  const events = SqliteEventStore.open(join(dir, 'events.db'));
  const readModels = SqliteReadModelStore.open(join(dir, 'read-models.db'));
  const projector = new Projector(events, readModels, ALL_PROJECTIONS);
  await projector.start();
  try {
    const aggregates = new AggregateRepository(events);
    const createVm = () => {
      const vm_id = randomUUID();
      return aggregates.handle(
        Vm,
        vm_id,
        { type: 'RequestVmCreation', vm_id, org_id: 'bench', owner_id: 'bench', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: new Date().toISOString() },
        newCommandContext({ org_id: 'bench', actor_key_id: null }),
      );
    };
    const projected = async (position: number) => {
      const start = process.hrtime.bigint();
      while (((await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) ?? -1) < position) await new Promise((r) => setImmediate(r));
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const lags: number[] = [];
    for (let i = 0; i < 1000; i++) lags.push(await projected((await createVm()).position!));

    // 50 writers, each creating a VM every 100 ms (500 writes/s in all) for 10 s.
    const [writers, perWriter, everyMs] = [50, 100, 100];
    const loaded: number[] = [];
    const started = Date.now();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        await new Promise((r) => setTimeout(r, (w * everyMs) / writers)); // spread the writers over the period
        for (let i = 0; i < perWriter; i++) {
          const due = Date.now() + everyMs;
          loaded.push(await projected((await createVm()).position!));
          await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        }
      }),
    );
    const rate = (writers * perWriter) / ((Date.now() - started) / 1000);
    console.log('projection lag (embedded projector, SQLite read models)');
    report([
      ['one writer', `p50 ${formatMs(percentile(lags, 50))} / p99 ${formatMs(percentile(lags, 99))}`],
      [`${writers} writers, ${Math.round(rate)} writes/s achieved (goal 500)`, `p50 ${formatMs(percentile(loaded, 50))} / p99 ${formatMs(percentile(loaded, 99))} (goal ≤ 10 ms)`],
    ]);
  } finally {
    await projector.stop();
    await events.close();
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
