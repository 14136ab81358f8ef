import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuplicateKeyError, type ReadModelStore } from '../read-model-store.port';
import { describeReadModelStoreContract } from '../testing/read-model-store.contract';
import { SqliteReadModelStore } from './sqlite-read-model-store';

const directory = mkdtempSync(join(tmpdir(), 'arbor-read-models-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describeReadModelStoreContract('SQLite', async () => SqliteReadModelStore.open(join(directory, 'contract.db')));

describe('SqliteReadModelStore on a file', () => {
  const opened: ReadModelStore[] = [];
  let fileCounter = 0;
  let file: string;

  const openStore = (): ReadModelStore => {
    const store = SqliteReadModelStore.open(file);
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    file = join(directory, `store-${++fileCounter}.db`);
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  it('keeps documents and checkpoints across close and reopen', async () => {
    const first = openStore();
    await first.commit([{ op: 'insertOne', collection: 'vms', doc: { _id: 'a', state: 'running', nested: { n: 1 } } }], {
      name: 'projector',
      position: 12,
    });
    await first.close();

    const reopened = openStore();

    expect(await reopened.find('vms', {})).toEqual([{ _id: 'a', state: 'running', nested: { n: 1 } }]);
    expect(await reopened.getCheckpoint('projector')).toBe(12);
  });

  it("lets two instances on one file see each other's commits and checkpoints", async () => {
    const one = openStore();
    const two = openStore();

    await one.commit([{ op: 'insertOne', collection: 'vms', doc: { _id: 'a', n: 1 } }], { name: 'projector', position: 1 });
    expect(await two.findOne('vms', { _id: 'a' })).toEqual({ _id: 'a', n: 1 });

    // The second instance is refused a position the first already applied.
    await expect(two.commit([{ op: 'insertOne', collection: 'vms', doc: { _id: 'b' } }], { name: 'projector', position: 1 })).resolves.toBe(false);
    await expect(
      two.commit([{ op: 'updateOne', collection: 'vms', filter: { _id: 'a' }, update: { $inc: { n: 1 } } }], { name: 'projector', position: 2 }),
    ).resolves.toBe(true);

    expect(await one.find('vms', {})).toEqual([{ _id: 'a', n: 2 }]);
    expect(await one.getCheckpoint('projector')).toBe(2);
  });

  it('leaves no partial writes of a failed commit after reopen', async () => {
    const store = openStore();
    await store.commit([{ op: 'insertOne', collection: 'vms', doc: { _id: 'a', n: 1 } }], { name: 'projector', position: 1 });

    await expect(
      store.commit(
        [
          { op: 'insertOne', collection: 'vms', doc: { _id: 'b', n: 1 } },
          { op: 'updateOne', collection: 'vms', filter: { _id: 'a' }, update: { $set: { n: 99 } } },
          { op: 'insertOne', collection: 'vms', doc: { _id: 'a' } },
        ],
        { name: 'projector', position: 2 },
      ),
    ).rejects.toBeInstanceOf(DuplicateKeyError);
    await store.close();

    const reopened = openStore();
    expect(await reopened.find('vms', {})).toEqual([{ _id: 'a', n: 1 }]);
    expect(await reopened.getCheckpoint('projector')).toBe(1);
  });

  it('enforces a unique index per collection as DuplicateKeyError', async () => {
    const store = openStore();
    await store.ensureIndex('repos', { org: 1, name: 1 }, { unique: true });
    await store.commit([
      { op: 'insertOne', collection: 'repos', doc: { _id: 'r1', org: 'o1', name: 'web' } },
      { op: 'insertOne', collection: 'repos', doc: { _id: 'r2', org: 'o2', name: 'web' } },
      // Another collection is not covered by the index.
      { op: 'insertOne', collection: 'other', doc: { _id: 'x', org: 'o1', name: 'web' } },
    ]);

    await expect(store.commit([{ op: 'insertOne', collection: 'repos', doc: { _id: 'r3', org: 'o1', name: 'web' } }])).rejects.toMatchObject(
      new DuplicateKeyError('repos', 'r3'),
    );
    await expect(
      store.commit([{ op: 'updateOne', collection: 'repos', filter: { _id: 'r2' }, update: { $set: { org: 'o1' } } }]),
    ).rejects.toBeInstanceOf(DuplicateKeyError);
    expect(await store.count('repos', {})).toBe(2);
  });
});
