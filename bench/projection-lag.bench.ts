import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext, PROJECTOR_CHECKPOINT } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { SqliteEventStore } from '@arbor/event-store';
import { SqliteReadModelStore } from '@arbor/read-models';
import { Projector } from '../apps/projector/src/projector';
import { ALL_PROJECTIONS } from '../apps/projector/src/projections';
import { formatMs, percentile, report } from './stats';

/** Time from an append's acknowledgement until the projector's checkpoint has passed it. */
export async function benchProjectionLag(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-lag-'));
  const events = SqliteEventStore.open(join(dir, 'events.db'));
  const readModels = SqliteReadModelStore.open(join(dir, 'read-models.db'));
  const projector = new Projector(events, readModels, ALL_PROJECTIONS);
  await projector.start();
  try {
    const aggregates = new AggregateRepository(events);
    const lags: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const vm_id = randomUUID();
      const result = await aggregates.handle(
        Vm,
        vm_id,
        { type: 'RequestVmCreation', vm_id, org_id: 'bench', owner_id: 'bench', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: new Date().toISOString() },
        newCommandContext({ org_id: 'bench', actor_key_id: null }),
      );
      const start = process.hrtime.bigint();
      while (((await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) ?? -1) < result.position!) await new Promise((r) => setImmediate(r));
      lags.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    console.log('projection lag (embedded projector, SQLite read models, one writer)');
    report([
      ['p50', formatMs(percentile(lags, 50))],
      ['p99', formatMs(percentile(lags, 99))],
    ]);
  } finally {
    await projector.stop();
    await events.close();
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
