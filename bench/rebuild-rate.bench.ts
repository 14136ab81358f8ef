import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AggregateRepository, newCommandContext, Secrets, type CommandContext } from '@arbor/application';
import { Commit, deterministicUuid, Exec, Tag, Vm, VM_CONFIG_DEFAULTS, VmPlacement } from '@arbor/domain';
import { InMemoryEventStore, SqliteEventStore, type EventStore } from '@arbor/event-store';
import { SqliteReadModelStore } from '@arbor/read-models';
import { AS_OF_PROJECTIONS } from '../apps/api/src/time-travel/read-models-as-of';
import { ALL_PROJECTIONS, Projector, rebuildReadModels, replayLog } from '@arbor/projections';
import { report, timed } from './stats';

/** About this many events in the log (VM sessions of ~30 events each, until it is reached). */
const TARGET_EVENTS = 100_000;
const ORGS = 20;
/** The projector's own pace pays a durable commit per event: it applies only this many. */
const PER_EVENT_SAMPLE = 5_000;

/**
 * Read-model rebuild rate: a log of ~100k events of what an installation writes (VMs created,
 * placed, booted, labelled, paused and resumed, execs with their output, commits, tags made and
 * moved, commits made public, VMs from commits, deletions), made through the deciders, replayed
 * from a SQLite event store through ALL_PROJECTIONS into SQLite read models:
 * - `rebuildReadModels` into a file, as `npm run rebuild-read-models` runs (`replayLog`: a thousand
 *   events a commit, the checkpoint exact);
 * - the same replay into memory, and through the projections `as_of` replays into memory, as
 *   time travel does;
 * - the projector's own pace, one commit (one fsync) per event, on the first 5,000 events.
 */
export async function benchRebuildRate(): Promise<void> {
  // The log on tmpfs where there is one: seeding it costs no fsyncs; reading it is the same.
  const logDir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'arbor-bench-rebuild-log-'));
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-rebuild-'));
  const events = SqliteEventStore.open(join(logDir, 'events.db'));
  try {
    const [total, seedMs] = await timed(async () => copyLog(await realisticLog(TARGET_EVENTS), events));

    const file = SqliteReadModelStore.open(join(dir, 'rebuilt.db'));
    const [, batchedMs] = await timed(() => rebuildReadModels({ eventStore: events, readModels: file }));
    await file.close();

    const memory = SqliteReadModelStore.open(':memory:');
    const [, memoryMs] = await timed(() => replayLog(events, memory));
    await memory.close();

    const past = SqliteReadModelStore.open(':memory:');
    const [, pastMs] = await timed(() => replayLog(events, past, { projections: AS_OF_PROJECTIONS }));
    await past.close();

    const perEvent = SqliteReadModelStore.open(join(dir, 'per-event.db'));
    const projector = new Projector(events, perEvent, ALL_PROJECTIONS);
    const sample = await events.readAll({ max_count: PER_EVENT_SAMPLE });
    const [, perEventMs] = await timed(async () => {
      for (const event of sample) await projector.apply(event);
    });
    await perEvent.close();

    const rate = (count: number, ms: number) => `${Math.round((count / ms) * 1000).toLocaleString('en')} events/s (${(ms / 1000).toFixed(2)} s)`;
    console.log(`Read-model rebuild: ${total} events of ${ORGS} orgs, SQLite log (seeded in ${(seedMs / 1000).toFixed(1)} s) → ALL_PROJECTIONS → SQLite read models`);
    report([
      ['rebuild-read-models into a file (1,000 events a commit)', rate(total, batchedMs)],
      ['batched replay into memory', rate(total, memoryMs)],
      [`as_of's replay into memory (${AS_OF_PROJECTIONS.map((p) => p.name).join(', ')})`, rate(total, pastMs)],
      [`the projector's pace, one commit per event, into a file (first ${sample.length})`, rate(sample.length, perEventMs)],
    ]);
  } finally {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(logDir, { recursive: true, force: true });
  }
}

/** Appends `recorded` to `target` in log order, consecutive events of one stream in one append. */
export async function copyLog(recorded: Awaited<ReturnType<EventStore['readAll']>>, target: EventStore): Promise<number> {
  for (let i = 0; i < recorded.length; ) {
    let end = i + 1;
    while (end < recorded.length && recorded[end].stream_id === recorded[i].stream_id) end++;
    await target.append(recorded[i].stream_id, recorded.slice(i, end).map(({ id, type, data, metadata }) => ({ id, type, data, metadata })), 'any');
    i = end;
  }
  return recorded.length;
}

/** A log of at least `target` events, written through the deciders as the api and the worker write it (secrets sealed). */
export async function realisticLog(target: number) {
  const keyDir = mkdtempSync(join(tmpdir(), 'arbor-bench-keys-'));
  const secrets = new Secrets({ dataDir: keyDir, mongoUrl: null }, {});
  try {
    return await writeRealisticLog(target, new AggregateRepository(new InMemoryEventStore(), secrets.events));
  } finally {
    await secrets.close();
    rmSync(keyDir, { recursive: true, force: true });
  }
}

async function writeRealisticLog(target: number, aggregates: AggregateRepository) {
  const memory = aggregates.store;
  const commits: { commit_id: string; vm_id: string; org: number }[] = [];
  for (let session = 0; (await memory.headPosition()) + 1 < target; session++) {
    const org = session % ORGS;
    const context = (): CommandContext => newCommandContext({ org_id: orgId(org), actor_key_id: orgId(org) });
    const now = () => new Date(Date.UTC(2026, 0, 1) + session * 60_000).toISOString();
    const vm_id = deterministicUuid(`vm-${session}`, 'bench');
    // A third of the VMs start from an earlier commit of the org (a branch), and record the use.
    const source = session % 3 === 2 ? commits.findLast((c) => c.org === org) : undefined;
    await aggregates.handle(Vm, vm_id, {
      type: 'RequestVmCreation', vm_id, org_id: orgId(org), owner_id: orgId(org), config: VM_CONFIG_DEFAULTS, labels: null, env: { LANG: 'C.UTF-8' },
      ip: `fd00::${session.toString(16)}`, parent_commit_id: source?.commit_id ?? null, grandparent_vm_id: source?.vm_id ?? null, now: now(),
    }, context());
    if (source) await aggregates.handle(Commit, source.commit_id, { type: 'UseCommit', vm_id, org_id: orgId(org), now: now() }, context());
    await aggregates.handle(VmPlacement, vm_id, { type: 'PlaceVm', vm_id, worker_id: 'bench-worker', now: now() }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmBooted', driver: 'memory', now: now() }, context());
    await aggregates.handle(Vm, vm_id, { type: 'SetVmLabels', labels: { team: `t${session % 7}`, session: String(session) } }, context());
    for (let e = 0; e < 3; e++) {
      const exec_id = deterministicUuid(`exec-${session}-${e}`, 'bench');
      await aggregates.handle(Exec, exec_id, {
        type: 'RequestExec', exec_id, vm_id, org_id: orgId(org), command: ['sh', '-c', `make test-${e}`], env: null, working_dir: '/root', stdin: null, timeout_secs: 0, now: now(),
      }, context());
      await aggregates.handle(Exec, exec_id, { type: 'RecordExecStarted', now: now() }, context());
      const chunks = [{ stream: 'stdout' as const, data: Buffer.from(`step ${e} of session ${session}: ok\n`.repeat(4)) }, { stream: 'stderr' as const, data: Buffer.from('warning: cache cold\n') }];
      await aggregates.handle(Exec, exec_id, { type: 'RecordExecOutput', chunks, limit_bytes: 1 << 20, now: now() }, context());
      await aggregates.handle(Exec, exec_id, { type: 'RecordExecExited', exit_code: 0, now: now() }, context());
    }
    await aggregates.handle(Vm, vm_id, { type: 'RequestVmStateChange', target: 'Paused' }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmPaused' }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RequestVmStateChange', target: 'Running' }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmResumed' }, context());

    const commit_id = deterministicUuid(`commit-${session}`, 'bench');
    await aggregates.handle(Vm, vm_id, { type: 'RequestVmCommit', commit_id, name: `c${session}`, description: null, keep_paused: false }, context());
    await aggregates.handle(Commit, commit_id, {
      type: 'RecordCommitCreated', commit_id, org_id: orgId(org), owner_id: orgId(org), name: `c${session}`, description: null, parent_vm_id: vm_id,
      grandparent_commit_id: source?.commit_id ?? null, includes_memory: false, config: VM_CONFIG_DEFAULTS, driver: 'memory', created_at: now(),
    }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmCommitted', includes_memory: false }, context());
    commits.push({ commit_id, vm_id, org });
    if (session % 4 === 0) await aggregates.handle(Commit, commit_id, { type: 'UpdateCommit', is_public: true }, context());

    // Every other session points the org's tag at its new commit: created once, moved after.
    if (session % 2 === 0) await pointTag(aggregates, org, `latest-${session % 5}`, commit_id, now(), context);

    // Three VMs in four are deleted again (a VM from a commit lets go of it).
    if (session % 4 !== 3) {
      await aggregates.handle(Vm, vm_id, { type: 'RequestVmDeletion' }, context());
      if (source) await aggregates.handle(Commit, source.commit_id, { type: 'ReleaseCommit', vm_id, now: now() }, context());
      await aggregates.handle(Vm, vm_id, { type: 'RecordVmDeleted', now: now() }, context());
    }
  }
  return memory.readAll();
}

/** A tag moves as the api moves it: the new commit held first, the one it left let go of after. */
async function pointTag(aggregates: AggregateRepository, org: number, tag_name: string, commit_id: string, now: string, context: () => CommandContext) {
  const tag = { org_id: orgId(org), tag_name };
  const { state } = await aggregates.load(Tag, tag);
  const tag_id = state.tag_id ?? deterministicUuid(`${org}-${tag_name}`, 'bench');
  await aggregates.handle(Commit, commit_id, { type: 'HoldCommitForTag', tag_id, tag: `tag ${tag_name}`, tag_stream: Tag.stream(tag), org_id: orgId(org), now }, context());
  if (!state.exists) {
    await aggregates.handle(Tag, tag, { type: 'CreateTag', tag_id, org_id: orgId(org), tag_name, commit_id, description: null, now }, context());
    return;
  }
  await aggregates.handle(Tag, tag, { type: 'UpdateTag', commit_id, now }, context());
  await aggregates.handle(Commit, state.commit_id!, { type: 'ReleaseCommitFromTag', tag_id, now }, context());
}

const orgId = (org: number) => `00000000-0000-4000-8000-${String(org).padStart(12, '0')}`;
