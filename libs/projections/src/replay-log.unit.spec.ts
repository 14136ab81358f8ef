import { AggregateRepository } from '@arbor/application';
import { InMemoryEventStore } from '@arbor/event-store';
import { SqliteReadModelStore } from '@arbor/read-models';
import { BatchedUnits } from './batched-units';
import { Projector } from './projector';
import { ALL_PROJECTIONS } from './projections';
import { replayLog } from './replay-log';
import { contents, id, writeHistory } from './testing/history';

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
    expect(await batched.findOne('c', { _id: '4' })).toEqual({ _id: '4' }); // a held insert made it whole: read from it
    expect(await store.getCheckpoint('p')).toBe(3);
    await batched.commit([{ op: 'updateOne', collection: 'c', filter: { _id: '4' }, update: { $set: { n: 4 } } }], { name: 'p', position: 5 });
    expect(await batched.findOne('c', { _id: '4' })).toEqual({ _id: '4', n: 4 }); // a held update names it: flushed first
    expect(await store.getCheckpoint('p')).toBe(5);
    await unit(6);
    expect(await batched.count('c', {})).toBe(5); // any other read of a collection written to: flushed first
    expect(await store.getCheckpoint('p')).toBe(6);
    await unit(7);
    await store.commit([], { name: 'p', position: 9 }); // someone else moved the checkpoint
    await expect(batched.flush()).rejects.toThrow(/moved past 7/);
    expect(await store.count('c', {})).toBe(5);
    await store.close();
  });

  it('answers a read by _id from the held write that made the document whole, as the store would after a commit', async () => {
    const store = SqliteReadModelStore.open(':memory:');
    const batched = new BatchedUnits(store, 100);
    await store.commit([{ op: 'insertOne', collection: 'c', doc: { _id: 'a', old: true } }]);
    await batched.commit(
      [
        { op: 'replaceOne', collection: 'c', filter: { _id: 'a' }, doc: { _id: 'a', nested: { n: 1 }, gone: undefined }, upsert: true },
        { op: 'replaceOne', collection: 'c', filter: { _id: 'b' }, doc: { _id: 'b', list: [1, 2] }, upsert: true },
        { op: 'insertOne', collection: 'c', doc: { _id: 'x' } },
        { op: 'deleteOne', collection: 'c', filter: { _id: 'x' } },
      ],
      { name: 'p', position: 1 },
    );
    const held = await Promise.all(['a', 'b', 'x'].map((_id) => batched.findOne('c', { _id })));
    expect(await store.getCheckpoint('p')).toBeNull(); // read from the held writes: nothing committed
    await batched.flush();
    expect(held).toEqual(await Promise.all(['a', 'b', 'x'].map((_id) => store.findOne('c', { _id }))));
    expect(held).toEqual([{ _id: 'a', nested: { n: 1 } }, { _id: 'b', list: [1, 2] }, null]);
    await store.close();
  });
});
