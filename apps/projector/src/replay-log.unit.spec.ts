import { AggregateRepository, newCommandContext, PROJECTOR_CHECKPOINT } from '@arbor/application';
import { Commit, Exec, Tag, Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
import { SqliteReadModelStore, type ReadModelStore } from '@arbor/read-models';
import { BatchedUnits } from './batched-units';
import { Projector } from './projector';
import { ALL_PROJECTIONS } from './projections';
import { replayLog } from './replay-log';

const org_id = 'org-1';
const now = '2026-11-23T10:00:00.000Z';
const context = () => newCommandContext({ org_id, actor_key_id: 'key-1' });
const id = (kind: number, n: number) => `${kind}${kind}${kind}${kind}${kind}${kind}${kind}${kind}-1111-4111-8111-${String(n).padStart(12, '0')}`;

/** A log with a chain of commits (each projected from its parent's ancestors), tags, exec output and deletions. */
async function writeHistory(aggregates: AggregateRepository): Promise<void> {
  let parent: { commit_id: string; vm_id: string } | null = null;
  for (let n = 0; n < 6; n++) {
    const vm_id = id(1, n);
    await aggregates.handle(Vm, vm_id, {
      type: 'RequestVmCreation', vm_id, org_id, owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: `fd00::${n}`,
      parent_commit_id: parent?.commit_id ?? null, grandparent_vm_id: parent?.vm_id ?? null, now,
    }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmBooted', driver: 'memory', now }, context());
    await aggregates.handle(Vm, vm_id, { type: 'SetVmLabels', labels: { n: String(n) } }, context());
    const exec_id = id(3, n);
    await aggregates.handle(Exec, exec_id, { type: 'RequestExec', exec_id, vm_id, org_id, command: ['true'], env: null, working_dir: null, stdin: null, timeout_secs: 0, now }, context());
    await aggregates.handle(Exec, exec_id, { type: 'RecordExecStarted', now }, context());
    await aggregates.handle(Exec, exec_id, { type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from(`out ${n}`) }], now }, context());
    const commit_id = id(2, n);
    await aggregates.handle(Commit, commit_id, {
      type: 'RecordCommitCreated', commit_id, org_id, owner_id: 'key-1', name: `c${n}`, description: null, parent_vm_id: vm_id,
      grandparent_commit_id: parent?.commit_id ?? null, includes_memory: false, config: VM_CONFIG_DEFAULTS, driver: 'memory', created_at: now,
    }, context());
    const tag = { org_id, tag_name: 'latest' };
    if (n === 0) await aggregates.handle(Tag, tag, { type: 'CreateTag', tag_id: id(4, 0), org_id, tag_name: 'latest', commit_id, description: null, now }, context());
    else await aggregates.handle(Tag, tag, { type: 'UpdateTag', commit_id, now }, context());
    if (n % 2 === 1) {
      await aggregates.handle(Vm, vm_id, { type: 'RequestVmDeletion' }, context());
      await aggregates.handle(Vm, vm_id, { type: 'RecordVmDeleted', now }, context());
    }
    parent = { commit_id, vm_id };
  }
}

/** Every document of every read model, and the checkpoint. */
async function contents(store: ReadModelStore) {
  const collections = ALL_PROJECTIONS.flatMap((projection) => projection.collections).sort();
  const documents = await Promise.all(collections.map(async (collection) => [collection, await store.find(collection, {}, { sort: { _id: 1 } })]));
  return { documents: Object.fromEntries(documents), checkpoint: await store.getCheckpoint(PROJECTOR_CHECKPOINT) };
}

describe('replayLog: the log through the projector, many events a commit', () => {
  const events = new InMemoryEventStore();
  let oneByOne: SqliteReadModelStore;

  beforeAll(async () => {
    await writeHistory(new AggregateRepository(events));
    oneByOne = SqliteReadModelStore.open(':memory:');
    const projector = new Projector(events, oneByOne, ALL_PROJECTIONS);
    for (const event of await events.readAll()) await projector.apply(event);
  });
  afterAll(() => oneByOne.close());

  it('leaves exactly the read models and checkpoint the projector leaves applying one event at a time', async () => {
    const store = SqliteReadModelStore.open(':memory:');
    expect(await replayLog(events, store)).toBe((await events.headPosition()) + 1);
    expect(await contents(store)).toEqual(await contents(oneByOne));
    expect((await store.findOne('commit_ancestors', { _id: id(2, 5) }))?.ancestor_ids).toEqual([4, 3, 2, 1, 0].map((n) => id(2, n)));
    await store.close();
  });

  it('replays a range, and a later range continues where an earlier one stopped', async () => {
    const head = await events.headPosition();
    const middle = Math.floor(head / 2);
    const partial = SqliteReadModelStore.open(':memory:');
    const upToMiddle = SqliteReadModelStore.open(':memory:');
    const projector = new Projector(events, upToMiddle, ALL_PROJECTIONS);
    for (const event of await events.readAll({ max_count: middle + 1 })) await projector.apply(event);

    expect(await replayLog(events, partial, { until: middle })).toBe(middle + 1);
    expect(await contents(partial)).toEqual(await contents(upToMiddle));
    expect(await replayLog(events, partial, { after: middle })).toBe(head - middle);
    expect(await contents(partial)).toEqual(await contents(oneByOne));
    await Promise.all([partial.close(), upToMiddle.close()]);
  });

  it('commits whole events with the checkpoint of the last, when full, before a read, and on flush', async () => {
    const store = SqliteReadModelStore.open(':memory:');
    const batched = new BatchedUnits(store, 3);
    const unit = (position: number) => batched.commit([{ op: 'insertOne', collection: 'c', doc: { _id: String(position) } }], { name: 'p', position });
    await unit(1);
    await unit(2);
    expect(await store.getCheckpoint('p')).toBeNull();
    expect(await batched.getCheckpoint('p')).toBe(2);
    expect(await unit(2)).toBe(false); // not past the checkpoint: nothing held, as the store answers
    await unit(3);
    expect(await store.getCheckpoint('p')).toBe(3); // three units: committed
    await unit(4);
    expect(await batched.findOne('c', { _id: '1' })).toEqual({ _id: '1' }); // no held write names it: read as it is
    expect(await batched.findOne('other', { x: 1 })).toBeNull(); // nothing held for the collection
    expect(await store.getCheckpoint('p')).toBe(3);
    expect(await batched.findOne('c', { _id: '4' })).toEqual({ _id: '4' }); // a held write names it: flushed first
    expect(await store.getCheckpoint('p')).toBe(4);
    await unit(5);
    expect(await batched.count('c', {})).toBe(5); // any other read of a collection written to: flushed first
    expect(await store.getCheckpoint('p')).toBe(5);
    await unit(6);
    await store.commit([], { name: 'p', position: 9 }); // someone else moved the checkpoint
    await expect(batched.flush()).rejects.toThrow(/moved past 6/);
    expect(await store.count('c', {})).toBe(5);
    await store.close();
  });
});
