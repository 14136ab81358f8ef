import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { streams, VM_CONFIG_DEFAULTS, vmDecider, type VmCommand } from '../../libs/domain/src';
import { handleCommand } from '../../libs/application/src/aggregate-repository';
import { newCommandContext } from '../../libs/application/src/command-context';
import { PROJECTOR_CHECKPOINT } from '../../libs/application/src/projection-waiter';
import { EVENTS_DB, READ_MODELS_DB } from '../../libs/application/src/open-infrastructure';
import { SqliteEventStore } from '../../libs/event-store/src/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../libs/read-models/src/sqlite/sqlite-read-model-store';
import { EVENT_STATS_COLLECTION } from '../../apps/projector/src/projections/event-stats.projection';
import { VMS_COLLECTION } from '../../libs/read-models/src/documents/vm.document';
import { rebuildReadModels } from '../../apps/projector/src/rebuild-read-models';
import { loadConfig } from '../../libs/application/src/arbor-config';
import { distEntry, startProcess, stopProcess } from '../support/processes';

/**
 * The real projector process, killed with SIGKILL at arbitrary moments while the log grows,
 * restarted each time: in the end every event is applied exactly once (the $inc-built
 * `event_stats` match the log's counts) and the read models equal a clean rebuild.
 */
describe('projector crash safety (real processes, SQLite)', () => {
  let dir: string;
  let events: SqliteEventStore;
  const orgs = ['org-a', 'org-b', 'org-c'];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'arbor-crash-'));
    events = SqliteEventStore.open(join(dir, EVENTS_DB));
  });
  afterAll(async () => {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const appendVmHistory = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const vm_id = randomUUID();
      const org_id = orgs[i % orgs.length];
      const context = () => newCommandContext({ org_id, actor_key_id: 'key' });
      const run = (cmd: VmCommand) => handleCommand(events, streams.vm(vm_id), vmDecider, cmd, context());
      await run({ type: 'RequestVmCreation', vm_id, org_id, owner_id: 'key', config: VM_CONFIG_DEFAULTS, labels: { n: String(i) }, env: {}, ip: 'fd00::1', now: new Date().toISOString() });
      await run({ type: 'RecordVmBooted', driver: 'test', now: new Date().toISOString() });
      await run({ type: 'SetVmLabels', labels: { n: String(i), relabelled: 'yes' } });
      if (i % 3 === 0) await run({ type: 'RequestVmDeletion' });
    }
  };

  it('neither skips nor double-applies an event across SIGKILLs', async () => {
    const entry = distEntry('projector');
    const env = { ARBOR_DATA_DIR: dir };
    await appendVmHistory(300);
    let kills = 0;
    const readModels = SqliteReadModelStore.open(join(dir, READ_MODELS_DB));
    try {
      for (let round = 0; round < 40; round++) {
        const projector = startProcess(entry, env);
        await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 250)));
        if (round % 4 === 1) await appendVmHistory(40); // the log grows while the projector runs
        await stopProcess(projector, 'SIGKILL');
        kills++;
        const checkpoint = await readModels.getCheckpoint(PROJECTOR_CHECKPOINT);
        if (checkpoint === (await events.headPosition()) && round >= 8) break;
      }
      // A final clean run to the end of the log.
      const last = startProcess(entry, env);
      const head = await events.headPosition();
      for (let i = 0; i < 600 && (await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) !== head; i++) await new Promise((r) => setTimeout(r, 50));
      await stopProcess(last);
      expect(kills).toBeGreaterThanOrEqual(8);
      expect(await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)).toBe(head);

      // Exactly once: per-org counters built with $inc equal the log's own counts.
      const log = await events.readAll({ max_count: 1_000_000 });
      for (const org of orgs) {
        const stats = await readModels.findOne(EVENT_STATS_COLLECTION, { _id: org });
        expect(stats?.total).toBe(log.filter((e) => e.metadata.org_id === org).length);
      }

      // And the VM read model equals a clean rebuild from the log.
      const rebuiltDir = mkdtempSync(join(tmpdir(), 'arbor-rebuild-'));
      const rebuilt = { config: loadConfig({ ARBOR_DATA_DIR: rebuiltDir }), eventStore: events, readModels: SqliteReadModelStore.open(join(rebuiltDir, READ_MODELS_DB)) };
      try {
        expect(await rebuildReadModels(rebuilt)).toBe(log.length);
        const sort = { _id: 1 } as const;
        expect(await readModels.find(VMS_COLLECTION, {}, { sort })).toEqual(await rebuilt.readModels.find(VMS_COLLECTION, {}, { sort }));
        expect(await readModels.find(EVENT_STATS_COLLECTION, {}, { sort })).toEqual(await rebuilt.readModels.find(EVENT_STATS_COLLECTION, {}, { sort }));
      } finally {
        await rebuilt.readModels.close();
        rmSync(rebuiltDir, { recursive: true, force: true });
      }
    } finally {
      await readModels.close();
    }
  }, 240_000);
});
