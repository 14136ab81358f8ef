import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AggregateRepository, EVENTS_DB, loadConfig, newCommandContext, PROJECTOR_CHECKPOINT, READ_MODELS_DB } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS, type VmCommand } from '@arbor/domain';
import { SqliteEventStore } from '@arbor/event-store';
import { SqliteReadModelStore, VMS_COLLECTION } from '@arbor/read-models';
import { EVENT_STATS_COLLECTION, rebuildReadModels } from '@arbor/projections';
import { pollUntil } from '../support/poll-until';
import { distEntry, startProcess, stopProcess } from '../support/processes';

const INITIAL_VMS = 1500;
const ROUNDS = 12;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The real projector process, killed with SIGKILL while it works through a long log (and while
 * the log grows), restarted each time: the checkpoint at each kill proves kills landed mid-stream,
 * and in the end every event is applied exactly once (the $inc-built `event_stats` match the log's
 * counts) and the read models equal a clean rebuild.
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
      const run = (cmd: VmCommand) => new AggregateRepository(events).handle(Vm, vm_id, cmd, context());
      await run({ type: 'RequestVmCreation', vm_id, org_id, owner_id: 'key', config: VM_CONFIG_DEFAULTS, labels: { n: String(i) }, env: {}, ip: 'fd00::1', now: new Date().toISOString() });
      await run({ type: 'RecordVmBooted', driver: 'test', now: new Date().toISOString() });
      await run({ type: 'SetVmLabels', labels: { n: String(i), relabelled: 'yes' } });
      if (i % 3 === 0) await run({ type: 'RequestVmDeletion' });
    }
  };

  it('neither skips nor double-applies an event across SIGKILLs', async () => {
    const entry = distEntry('projector');
    const env = { ARBOR_DATA_DIR: dir };
    // About 5,000 events to begin with, topped up whenever fewer than 2,000 wait (see below).
    await appendVmHistory(INITIAL_VMS);
    const kills: { checkpoint: number | null; head: number }[] = [];
    const readModels = SqliteReadModelStore.open(join(dir, READ_MODELS_DB));
    const checkpoint = () => readModels.getCheckpoint(PROJECTOR_CHECKPOINT);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const before = await checkpoint();
        // Keep a backlog at every start, whatever this machine's speed: the projector always has
        // something to apply (so the wait below cannot hang) and a tail left when it is killed
        // (a projector catching up in batches applies a thousand events in well under 100 ms).
        if ((await events.headPosition()) - (before ?? -1) < 2000) await appendVmHistory(500);
        const projector = startProcess(entry, env);
        // Every third run, the log grows while the projector works.
        const growing = round % 3 === 1 ? appendVmHistory(30) : Promise.resolve();
        // Once this run has applied something, at a random moment soon after: mid-stream, and
        // sometimes mid-commit. (A fixed delay would mostly hit start-up on a loaded machine.)
        await pollUntil(async () => (await checkpoint()) !== before || projector.child.exitCode !== null, { timeoutMs: 60_000, intervalMs: 5 });
        await sleep(Math.random() * 40);
        // The head known before the kill: anything the projector applied after this read only makes
        // the checkpoint bigger, so checkpoint < head means events were still waiting when it died.
        const head = await events.headPosition();
        await stopProcess(projector, 'SIGKILL');
        expect(projector.child.signalCode).toBe('SIGKILL'); // killed, not exited on its own
        kills.push({ checkpoint: await checkpoint(), head });
        await growing;
      }
      // The kills must have landed mid-stream, with part of the log applied and part not.
      const midStream = kills.filter(({ checkpoint, head }) => checkpoint !== null && checkpoint > 0 && checkpoint < head);
      expect(midStream.length).toBeGreaterThanOrEqual(ROUNDS / 2);

      // A final clean run to the end of the log.
      const last = startProcess(entry, env);
      const head = await events.headPosition();
      await pollUntil(async () => (await checkpoint()) === head, { timeoutMs: 120_000, intervalMs: 50 });
      await stopProcess(last);
      expect(await checkpoint()).toBe(head);

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
