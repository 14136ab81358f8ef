import { randomUUID } from 'node:crypto';
import { DuplicateKeyError, type Document, type Filter, type ReadModelStore, type WriteOp } from '../read-model-store.port';

/**
 * The behaviour every ReadModelStore adapter shares. The store may be a shared, non-empty database
 * (a real MongoDB): every test uses its own collection and checkpoint names and counts only what
 * it wrote. The suite opens the store once and closes it at the end.
 */
export function describeReadModelStoreContract(adapterName: string, open: () => Promise<ReadModelStore>): void {
  describe(`ReadModelStore contract: ${adapterName}`, () => {
    let store: ReadModelStore;

    beforeAll(async () => {
      store = await open();
    });

    afterAll(async () => {
      await store?.close();
    });

    const uniqueName = (label: string): string => `${label}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const insertOp = (collection: string, doc: Document): WriteOp => ({ op: 'insertOne', collection, doc });
    const insertAll = (collection: string, docs: Document[]) => store.commit(docs.map((doc) => insertOp(collection, doc)));
    const idsOf = (docs: Document[]): string[] => docs.map((doc) => doc._id);
    const sortedIds = async (collection: string, filter: Filter = {}): Promise<string[]> =>
      idsOf(await store.find(collection, filter)).sort();
    const commitError = (ops: WriteOp[], checkpoint?: { name: string; position: number }): Promise<unknown> =>
      store.commit(ops, checkpoint).then(
        () => new Error('expected the commit to fail'),
        (error: unknown) => error,
      );

    describe('documents', () => {
      it('round-trips a nested JSON document through insertOne and findOne', async () => {
        const collection = uniqueName('docs');
        const doc: Document = {
          _id: 'vm-1',
          name: 'ünïcødé ✓ 日本語 🚀 "quoted" \\ back',
          count: 42,
          ratio: 0.25,
          negative: -7,
          large: 2 ** 40,
          on: true,
          off: false,
          nothing: null,
          tags: ['a', 'b'],
          empty: [],
          emptyObject: {},
          nested: { level: { list: [1, 'two', { three: 3 }, null], flag: false } },
        };

        await expect(store.commit([insertOp(collection, doc)])).resolves.toBe(true);

        expect(await store.findOne(collection, { _id: 'vm-1' })).toEqual(doc);
        expect(await store.findOne(collection, { 'nested.level.flag': false })).toEqual(doc);
        expect(await store.find(collection, {})).toEqual([doc]);
        expect(await store.findOne(collection, { _id: 'vm-2' })).toBeNull();
      });

      it('rejects a second insertOne of an _id with DuplicateKeyError and applies nothing of that commit', async () => {
        const collection = uniqueName('dup');
        await insertAll(collection, [{ _id: 'a', v: 1 }]);

        const error = await commitError([
          insertOp(collection, { _id: 'b', v: 1 }),
          { op: 'updateOne', collection, filter: { _id: 'a' }, update: { $set: { v: 2 } } },
          insertOp(collection, { _id: 'a', v: 3 }),
        ]);

        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ collection, id: 'a' });
        expect(await store.find(collection, {})).toEqual([{ _id: 'a', v: 1 }]);
      });
    });

    describe('updateOne', () => {
      const updateOne = async (collection: string, filter: Filter, update: Record<string, unknown>, upsert?: boolean) =>
        store.commit([{ op: 'updateOne', collection, filter, update, upsert }]);

      it('$set writes dotted paths, creating nested objects and keeping sibling fields', async () => {
        const collection = uniqueName('set');
        await insertAll(collection, [{ _id: 'a', name: 'x', config: { cpu: 1, mem: 512 } }]);

        await updateOne(collection, { _id: 'a' }, { $set: { 'config.mem': 1024, 'config.disk.size': 10, state: 'running' } });

        expect(await store.findOne(collection, { _id: 'a' })).toEqual({
          _id: 'a',
          name: 'x',
          config: { cpu: 1, mem: 1024, disk: { size: 10 } },
          state: 'running',
        });
      });

      it('$unset removes top-level and nested fields', async () => {
        const collection = uniqueName('unset');
        await insertAll(collection, [{ _id: 'a', keep: 1, drop: 2, nested: { keep: 3, drop: 4 } }]);

        await updateOne(collection, { _id: 'a' }, { $unset: { drop: '', 'nested.drop': '', absent: '' } });

        expect(await store.findOne(collection, { _id: 'a' })).toEqual({ _id: 'a', keep: 1, nested: { keep: 3 } });
      });

      it('$inc adds to numbers and starts missing fields (also dotted) at the increment', async () => {
        const collection = uniqueName('inc');
        await insertAll(collection, [{ _id: 'a', n: 1 }]);

        await updateOne(collection, { _id: 'a' }, { $inc: { n: 2, down: -1, 'stats.hits': 1 } });
        await updateOne(collection, { _id: 'a' }, { $inc: { 'stats.hits': 1 } });

        expect(await store.findOne(collection, { _id: 'a' })).toEqual({ _id: 'a', n: 3, down: -1, stats: { hits: 2 } });
      });

      it('$push appends to an array and creates a missing one', async () => {
        const collection = uniqueName('push');
        await insertAll(collection, [{ _id: 'a', list: ['x'] }]);

        await updateOne(collection, { _id: 'a' }, { $push: { list: 'y', 'other.items': { k: 1 } } });

        expect(await store.findOne(collection, { _id: 'a' })).toEqual({ _id: 'a', list: ['x', 'y'], other: { items: [{ k: 1 }] } });
      });

      it('changes only one of several matching documents', async () => {
        const collection = uniqueName('one');
        await insertAll(collection, [
          { _id: 'a', group: 'g' },
          { _id: 'b', group: 'g' },
          { _id: 'c', group: 'h' },
        ]);

        await updateOne(collection, { group: 'g' }, { $set: { touched: true } });

        expect(await store.count(collection, { touched: true })).toBe(1);
        expect(await store.count(collection, { group: 'g', touched: true })).toBe(1);
      });

      it('with upsert inserts the filter equalities, the update and $setOnInsert; later updates skip $setOnInsert', async () => {
        const collection = uniqueName('upsert');
        const update = (createdAt: string) => ({ $set: { state: 'booting' }, $inc: { n: 1 }, $setOnInsert: { created_at: createdAt } });

        await expect(updateOne(collection, { _id: 'new', org: 'o1' }, update('t0'), true)).resolves.toBe(true);
        expect(await store.findOne(collection, { _id: 'new' })).toEqual({ _id: 'new', org: 'o1', state: 'booting', n: 1, created_at: 't0' });

        await updateOne(collection, { _id: 'new', org: 'o1' }, update('t1'), true);
        expect(await store.find(collection, {})).toEqual([{ _id: 'new', org: 'o1', state: 'booting', n: 2, created_at: 't0' }]);
      });

      it('without upsert does nothing when nothing matches', async () => {
        const collection = uniqueName('noupsert');
        await insertAll(collection, [{ _id: 'a', n: 1 }]);

        await expect(updateOne(collection, { _id: 'b' }, { $set: { n: 5 } }, false)).resolves.toBe(true);
        await updateOne(collection, { _id: 'c' }, { $set: { n: 5 } });

        expect(await store.find(collection, {})).toEqual([{ _id: 'a', n: 1 }]);
      });

      it('with an update document without operators replaces the matched document', async () => {
        const collection = uniqueName('replaceupdate');
        await insertAll(collection, [{ _id: 'a', old: true, n: 1 }]);

        await updateOne(collection, { _id: 'a' }, { fresh: true });

        expect(await store.findOne(collection, { _id: 'a' })).toEqual({ _id: 'a', fresh: true });
      });
    });

    describe('updateMany, replaceOne, deleteOne, deleteMany', () => {
      it('updateMany changes every matching document and no other', async () => {
        const collection = uniqueName('many');
        await insertAll(collection, [
          { _id: 'a', org: 'o1', n: 1 },
          { _id: 'b', org: 'o1', n: 2 },
          { _id: 'c', org: 'o2', n: 3 },
        ]);

        await store.commit([{ op: 'updateMany', collection, filter: { org: 'o1' }, update: { $inc: { n: 10 }, $set: { seen: true } } }]);

        expect(await store.find(collection, {}, { sort: { _id: 1 } })).toEqual([
          { _id: 'a', org: 'o1', n: 11, seen: true },
          { _id: 'b', org: 'o1', n: 12, seen: true },
          { _id: 'c', org: 'o2', n: 3 },
        ]);
      });

      it('replaceOne replaces the whole matched document', async () => {
        const collection = uniqueName('replace');
        await insertAll(collection, [{ _id: 'a', old: 1, nested: { x: 1 } }]);

        await store.commit([{ op: 'replaceOne', collection, filter: { _id: 'a' }, doc: { _id: 'a', fresh: 2 } }]);

        expect(await store.find(collection, {})).toEqual([{ _id: 'a', fresh: 2 }]);
      });

      it('replaceOne inserts when nothing matches only with upsert', async () => {
        const collection = uniqueName('replaceupsert');

        await store.commit([{ op: 'replaceOne', collection, filter: { _id: 'a' }, doc: { _id: 'a', n: 1 } }]);
        expect(await store.count(collection, {})).toBe(0);

        await store.commit([{ op: 'replaceOne', collection, filter: { _id: 'a' }, doc: { _id: 'a', n: 1 }, upsert: true }]);
        await store.commit([{ op: 'replaceOne', collection, filter: { _id: 'a' }, doc: { _id: 'a', n: 2 }, upsert: true }]);
        expect(await store.find(collection, {})).toEqual([{ _id: 'a', n: 2 }]);
      });

      it('deleteOne removes exactly one matching document', async () => {
        const collection = uniqueName('deleteone');
        await insertAll(collection, [
          { _id: 'a', group: 'g' },
          { _id: 'b', group: 'g' },
          { _id: 'c', group: 'h' },
        ]);

        await store.commit([{ op: 'deleteOne', collection, filter: { group: 'g' } }]);
        await store.commit([{ op: 'deleteOne', collection, filter: { _id: 'missing' } }]);

        expect(await store.count(collection, { group: 'g' })).toBe(1);
        expect(await store.count(collection, { group: 'h' })).toBe(1);
      });

      it('deleteMany removes every matching document and no other', async () => {
        const collection = uniqueName('deletemany');
        await insertAll(collection, [
          { _id: 'a', group: 'g' },
          { _id: 'b', group: 'g' },
          { _id: 'c', group: 'h' },
        ]);

        await store.commit([{ op: 'deleteMany', collection, filter: { group: 'g' } }]);

        expect(await sortedIds(collection)).toEqual(['c']);
      });
    });

    describe('find and count', () => {
      const collection = uniqueName('query');
      const fixture: Document[] = [
        { _id: 'a', org: 'o1', n: 1, state: 'running', tags: ['x', 'y'], meta: { zone: 'eu', size: 2 }, deleted_at: null },
        { _id: 'b', org: 'o1', n: 2, state: 'paused', tags: ['y'], meta: { zone: 'us', size: 1 }, deleted_at: '2024-01-01' },
        { _id: 'c', org: 'o2', n: 3, state: 'running', tags: [], meta: { zone: 'eu', size: 3 } },
        { _id: 'd', org: 'o2', n: 4, state: 'dead', meta: { zone: 'us', size: 2 }, deleted_at: null, note: 'hello' },
        { _id: 'e', org: 'o3', n: 5, state: 'running', tags: ['x'], meta: { zone: 'ap', size: 1 }, deleted_at: null },
      ];

      beforeAll(async () => {
        await insertAll(collection, fixture);
      });

      it.each<[string, Filter, string[]]>([
        ['an empty filter', {}, ['a', 'b', 'c', 'd', 'e']],
        ['equality', { state: 'running' }, ['a', 'c', 'e']],
        ['equality on several fields', { org: 'o2', state: 'dead' }, ['d']],
        ['equality on _id', { _id: 'b' }, ['b']],
        ['_id plus a field that does not match', { _id: 'a', org: 'o2' }, []],
        ['$in on _id', { _id: { $in: ['a', 'd', 'zz'] } }, ['a', 'd']],
        ['$eq', { n: { $eq: 2 } }, ['b']],
        ['$ne', { state: { $ne: 'running' } }, ['b', 'd']],
        ['$gt', { n: { $gt: 3 } }, ['d', 'e']],
        ['$gte', { n: { $gte: 3 } }, ['c', 'd', 'e']],
        ['$lt', { n: { $lt: 2 } }, ['a']],
        ['$lte', { n: { $lte: 2 } }, ['a', 'b']],
        ['a range', { n: { $gt: 1, $lt: 4 } }, ['b', 'c']],
        ['$gt on strings', { deleted_at: { $gt: '2000' } }, ['b']],
        ['$in', { state: { $in: ['paused', 'dead'] } }, ['b', 'd']],
        ['$nin', { state: { $nin: ['running', 'paused'] } }, ['d']],
        ['$exists true', { note: { $exists: true } }, ['d']],
        ['$exists false', { deleted_at: { $exists: false } }, ['c']],
        ['$and', { $and: [{ org: 'o1' }, { n: { $gt: 1 } }] }, ['b']],
        ['$or', { $or: [{ org: 'o3' }, { state: 'paused' }] }, ['b', 'e']],
        ['equality on a dotted path', { 'meta.zone': 'eu' }, ['a', 'c']],
        ['an operator on a dotted path', { 'meta.size': { $gte: 2 } }, ['a', 'c', 'd']],
        ['equality against null (null or missing)', { deleted_at: null }, ['a', 'c', 'd', 'e']],
        ['equality against an array element', { tags: 'x' }, ['a', 'e']],
        ['no match', { state: 'nope' }, []],
      ])('filters by %s, and count agrees', async (_name, filter, expected) => {
        expect(await sortedIds(collection, filter)).toEqual(expected);
        expect(await store.count(collection, filter)).toBe(expected.length);
      });

      it('returns whole documents', async () => {
        expect(await store.find(collection, { _id: 'd' })).toEqual([fixture[3]]);
      });

      it.each<[string, Record<string, 1 | -1>, string[]]>([
        ['one key ascending', { n: 1 }, ['a', 'b', 'c', 'd', 'e']],
        ['one key descending', { n: -1 }, ['e', 'd', 'c', 'b', 'a']],
        ['two keys, asc then desc', { org: 1, n: -1 }, ['b', 'a', 'd', 'c', 'e']],
        ['a dotted key then _id descending', { 'meta.zone': 1, _id: -1 }, ['e', 'c', 'a', 'd', 'b']],
        ['two keys, desc then asc', { 'meta.size': -1, _id: 1 }, ['c', 'a', 'd', 'b', 'e']],
      ])('sorts by %s', async (_name, sort, expected) => {
        expect(idsOf(await store.find(collection, {}, { sort }))).toEqual(expected);
      });

      it.each<[string, { skip?: number; limit?: number }, string[]]>([
        ['limit', { limit: 2 }, ['a', 'b']],
        ['skip', { skip: 3 }, ['d', 'e']],
        ['skip and limit', { skip: 1, limit: 2 }, ['b', 'c']],
        ['skip past the end', { skip: 10 }, []],
      ])('pages with %s after sorting', async (_name, page, expected) => {
        expect(idsOf(await store.find(collection, {}, { sort: { n: 1 }, ...page }))).toEqual(expected);
      });

      it('combines a filter, a sort and a limit', async () => {
        expect(idsOf(await store.find(collection, { state: 'running' }, { sort: { n: -1 }, limit: 2 }))).toEqual(['e', 'c']);
      });

      it('finds and counts nothing in a collection that was never written', async () => {
        const empty = uniqueName('empty');
        expect(await store.find(empty, {})).toEqual([]);
        expect(await store.findOne(empty, {})).toBeNull();
        expect(await store.count(empty, {})).toBe(0);
      });
    });

    // Adapters may read candidates through an index: equality must keep MongoDB's meaning there.
    describe('find and count on indexed fields', () => {
      const collection = uniqueName('indexedquery');
      const fixture: Document[] = [
        { _id: 'a', kind: 'bool', value: true, meta: { zone: 'eu' }, tags: ['x', 'y'] },
        { _id: 'b', kind: 'bool', value: false, meta: { zone: 'us' }, tags: 'x' },
        { _id: 'c', kind: 'num', value: 1, meta: [{ zone: 'eu' }, { zone: 'ap' }] },
        { _id: 'd', kind: 'num', value: '1', meta: { zone: null } },
        { _id: 'e', kind: 'num', value: 0 },
        { _id: 'f', kind: 'null', value: null, meta: 'eu' },
        { _id: 'g', kind: 'null' },
        { _id: 'h', kind: 'object', value: { x: 1 }, tags: [] },
        { _id: 'i', kind: 'array', value: [1, true, null, 'x'] },
        { _id: 'j', kind: 'num', value: 2 ** 60 },
        { _id: 'k', kind: 'num', value: 0.1 },
      ];

      beforeAll(async () => {
        await store.ensureIndex(collection, { kind: 1, value: 1 });
        await store.ensureIndex(collection, { value: 1 });
        await store.ensureIndex(collection, { 'meta.zone': 1 });
        await store.ensureIndex(collection, { tags: 1 });
        await store.ensureIndex(collection, { 'tags.0': 1 });
        await insertAll(collection, fixture);
      });

      it.each<[string, Filter, string[]]>([
        ['true (not the number 1)', { value: true }, ['a', 'i']],
        ['false (not the number 0)', { value: false }, ['b']],
        ['the number 1 (not true, not the string "1")', { value: 1 }, ['c', 'i']],
        ['the string "1" (not the number 1)', { value: '1' }, ['d']],
        ['the number 0 (not false)', { value: 0 }, ['e']],
        ['null (null, missing, or an array holding null)', { value: null }, ['f', 'g', 'i']],
        ['$eq null', { value: { $eq: null } }, ['f', 'g', 'i']],
        ['an array element', { value: 'x' }, ['i']],
        ['an integer beyond 2^53', { value: 2 ** 60 }, ['j']],
        ['a fraction', { value: 0.1 }, ['k']],
        ['an object', { value: { x: 1 } }, ['h']],
        ["a string spelling an object's JSON", { value: '{"x":1}' }, []],
        ["a string spelling an array's JSON", { tags: '["x","y"]' }, []],
        ['a scalar or an array element', { tags: 'x' }, ['a', 'b']],
        ['a dotted path, also through an array of objects', { 'meta.zone': 'eu' }, ['a', 'c']],
        ['null on a dotted path (null or missing on the way)', { 'meta.zone': null }, ['d', 'e', 'f', 'g', 'h', 'i', 'j', 'k']],
        ['both fields of a compound index', { kind: 'num', value: 1 }, ['c']],
        ['a compound index with null', { kind: 'null', value: null }, ['f', 'g']],
        ['$eq on both fields', { kind: { $eq: 'bool' }, value: { $eq: false } }, ['b']],
        ['equalities inside $and', { $and: [{ kind: 'num' }, { value: 0 }] }, ['e']],
        ['the first field of a compound index and an operator', { kind: 'num', value: { $gt: 0 } }, ['c', 'j', 'k']],
        ['an indexed field and an unindexed one', { kind: 'bool', tags: { $exists: false } }, []],
        ['an array index position', { 'tags.0': 'x' }, ['a']],
      ])('finds %s, and count and findOne agree', async (_name, filter, expected) => {
        expect(await sortedIds(collection, filter)).toEqual(expected);
        expect(await store.count(collection, filter)).toBe(expected.length);
        const one = await store.findOne(collection, filter);
        if (expected.length === 0) expect(one).toBeNull();
        else expect(expected).toContain(one?._id);
      });

      it('sorts and pages what an index found', async () => {
        expect(idsOf(await store.find(collection, { kind: 'num' }, { sort: { _id: -1 }, skip: 1, limit: 3 }))).toEqual(['j', 'e', 'd']);
      });

      it('sorts by the fields an index holds after the pinned ones, either way, strings and numbers and both mixed', async () => {
        const sorted = uniqueName('indexedsort');
        await store.ensureIndex(sorted, { org: 1, name: 1, n: 1 });
        await insertAll(sorted, [
          { _id: 'a', org: 'o1', name: 'web', n: 2 },
          { _id: 'b', org: 'o1', name: 'api', n: 1 },
          { _id: 'c', org: 'o2', name: 'db', n: 1 },
          { _id: 'd', org: 'o1', name: 'Zed', n: 3 },
          { _id: 'e', org: 'o1', name: 'émile', n: 0 },
          { _id: 'f', org: 'o2', name: 7, n: 5 },
          { _id: 'g', org: 'o1', name: 'api', n: 0 },
          { _id: 'h', org: 'o2', name: 'db', n: 0 },
        ]);
        expect(idsOf(await store.find(sorted, { org: 'o1' }, { sort: { name: 1, n: 1 } }))).toEqual(['d', 'g', 'b', 'a', 'e']);
        expect(idsOf(await store.find(sorted, { org: 'o1' }, { sort: { name: -1, n: -1 } }))).toEqual(['e', 'a', 'b', 'g', 'd']);
        expect(idsOf(await store.find(sorted, { org: 'o1', name: 'api' }, { sort: { n: 1 } }))).toEqual(['g', 'b']);
        expect(idsOf(await store.find(sorted, { org: 'o1' }, { sort: { name: 1, n: 1 }, skip: 1, limit: 2 }))).toEqual(['g', 'b']);
        // A number sorts before every string.
        expect(idsOf(await store.find(sorted, { org: 'o2' }, { sort: { name: 1, n: 1 } }))).toEqual(['f', 'h', 'c']);
        expect(idsOf(await store.find(sorted, { org: 'o2' }, { sort: { name: -1, n: 1 } }))).toEqual(['h', 'c', 'f']);
      });

      it('writes through an index and finds documents by the values they change to', async () => {
        const written = uniqueName('indexedwrites');
        await store.ensureIndex(written, { org: 1, state: 1 });
        await insertAll(written, [
          { _id: 'a', org: 'o1', state: 'running' },
          { _id: 'b', org: 'o1', state: 'paused' },
          { _id: 'c', org: 'o2', state: 'running' },
        ]);

        await store.commit([
          { op: 'updateMany', collection: written, filter: { org: 'o1', state: 'running' }, update: { $set: { state: 'paused' } } },
          { op: 'updateOne', collection: written, filter: { org: 'o2' }, update: { $set: { org: ['o1', 'o2'] } } },
          { op: 'updateOne', collection: written, filter: { org: 'o3', state: 'new' }, update: { $set: { n: 1 } }, upsert: true },
        ]);

        expect(await sortedIds(written, { org: 'o1', state: 'paused' })).toEqual(['a', 'b']);
        expect(await store.count(written, { org: 'o1', state: 'running' })).toBe(1);
        expect(await store.findOne(written, { org: 'o3', state: 'new' })).toMatchObject({ org: 'o3', state: 'new', n: 1 });

        await store.commit([{ op: 'deleteMany', collection: written, filter: { org: 'o1' } }]);
        expect(await store.find(written, {}, { sort: { _id: 1 } })).toEqual([expect.objectContaining({ org: 'o3' })]);
      });
    });

    describe('checkpoints', () => {
      it('getCheckpoint is null for an unknown name, then the committed position', async () => {
        const name = uniqueName('cp');
        expect(await store.getCheckpoint(name)).toBeNull();

        await expect(store.commit([], { name, position: 7 })).resolves.toBe(true);

        expect(await store.getCheckpoint(name)).toBe(7);
        expect(await store.getCheckpoint(uniqueName('other'))).toBeNull();
      });

      it('applies a commit when the stored position is absent or lower, and refuses it, writing nothing, otherwise', async () => {
        const collection = uniqueName('guarded');
        const name = uniqueName('cp');

        await expect(store.commit([insertOp(collection, { _id: 'first', n: 0 })], { name, position: 5 })).resolves.toBe(true);
        await expect(store.commit([insertOp(collection, { _id: 'same' })], { name, position: 5 })).resolves.toBe(false);
        await expect(
          store.commit(
            [insertOp(collection, { _id: 'lower' }), { op: 'updateOne', collection, filter: { _id: 'first' }, update: { $inc: { n: 1 } } }],
            { name, position: 3 },
          ),
        ).resolves.toBe(false);

        expect(await store.find(collection, {})).toEqual([{ _id: 'first', n: 0 }]);
        expect(await store.getCheckpoint(name)).toBe(5);

        await expect(
          store.commit([{ op: 'updateOne', collection, filter: { _id: 'first' }, update: { $inc: { n: 1 } } }], { name, position: 6 }),
        ).resolves.toBe(true);
        expect(await store.find(collection, {})).toEqual([{ _id: 'first', n: 1 }]);
        expect(await store.getCheckpoint(name)).toBe(6);
      });

      it('keeps each name on its own position', async () => {
        const [one, two] = [uniqueName('cp'), uniqueName('cp')];
        await store.commit([], { name: one, position: 10 });

        await expect(store.commit([], { name: two, position: 2 })).resolves.toBe(true);

        expect(await store.getCheckpoint(one)).toBe(10);
        expect(await store.getCheckpoint(two)).toBe(2);
      });

      it('onCommitted hears each applied commit of this store with its checkpoint, the writes already readable; a refused one is not heard', async () => {
        const collection = uniqueName('heard');
        const name = uniqueName('cp');
        const heard: { checkpoint: unknown; found: number }[] = [];
        const reads: Promise<void>[] = [];
        const stop = store.onCommitted((checkpoint) => {
          if (checkpoint !== null && checkpoint.name !== name) return; // another test's commit
          reads.push(store.count(collection, {}).then((found) => void heard.push({ checkpoint, found })));
        });
        await store.commit([insertOp(collection, { _id: 'a' })], { name, position: 1 });
        await store.commit([insertOp(collection, { _id: 'b' })], { name, position: 1 });
        await store.commit([insertOp(collection, { _id: 'c' })]);
        stop();
        await store.commit([insertOp(collection, { _id: 'd' })], { name, position: 2 });
        await Promise.all(reads);
        expect(heard).toEqual([
          { checkpoint: { name, position: 1 }, found: 1 },
          { checkpoint: null, found: 2 },
        ]);
      });
    });

    describe('atomicity', () => {
      const seed = [
        { _id: 'a', n: 1 },
        { _id: 'b', n: 1 },
      ];

      it.each<[string, (collection: string) => WriteOp]>([
        ['a duplicate _id', (collection) => insertOp(collection, { _id: 'a' })],
        ['$inc with a non-numeric amount', (collection) => ({ op: 'updateOne', collection, filter: { _id: 'a' }, update: { $inc: { n: 'one' } } })],
      ])('a commit failing on %s rolls back every earlier op and leaves the checkpoint unchanged', async (_name, failing) => {
        const collection = uniqueName('atomic');
        const name = uniqueName('cp');
        await store.commit(seed.map((doc) => insertOp(collection, doc)), { name, position: 1 });

        const error = await commitError(
          [
            insertOp(collection, { _id: 'c', n: 1 }),
            { op: 'updateOne', collection, filter: { _id: 'a' }, update: { $inc: { n: 1 } } },
            { op: 'updateMany', collection, filter: {}, update: { $set: { touched: true } } },
            { op: 'replaceOne', collection, filter: { _id: 'z' }, doc: { _id: 'z' }, upsert: true },
            { op: 'deleteOne', collection, filter: { _id: 'b' } },
            failing(collection),
            insertOp(collection, { _id: 'd', n: 1 }),
          ],
          { name, position: 2 },
        );

        expect(error).toBeInstanceOf(Error);
        expect(await store.find(collection, {}, { sort: { _id: 1 } })).toEqual(seed);
        expect(await store.getCheckpoint(name)).toBe(1);
      });
    });

    describe('one commit changing a document again and again', () => {
      it('each op sees what the ops before it in the commit left, by _id and by any other filter', async () => {
        const collection = uniqueName('unit');
        const inc = (filter: Filter, n: number): WriteOp => ({ op: 'updateOne', collection, filter, update: { $inc: { n }, $set: { 'deep.seen': n } } });
        await store.commit([
          insertOp(collection, { _id: 'a', org: 'o', n: 0 }),
          inc({ _id: 'a' }, 1),
          inc({ _id: 'a' }, 2),
          inc({ org: 'o' }, 4), // found through the table: it holds what the commit changed so far
          { op: 'updateMany', collection, filter: { n: 7 }, update: { $set: { seven: true } } },
          inc({ _id: 'a' }, 8),
          { op: 'replaceOne', collection, filter: { _id: 'b' }, doc: { _id: 'b', org: 'o', n: 0, deep: { seen: 0 } }, upsert: true },
          inc({ _id: 'b' }, 1),
          { op: 'deleteOne', collection, filter: { _id: 'b' } },
          inc({ _id: 'b' }, 100), // gone: nothing to change
          insertOp(collection, { _id: 'b', n: 5 }),
          { op: 'updateOne', collection, filter: { _id: 'b' }, update: { $push: { list: 1 } } },
          { op: 'updateOne', collection, filter: { _id: 'b' }, update: { $push: { list: 2 } } },
        ]);
        expect(await store.find(collection, {}, { sort: { _id: 1 } })).toEqual([
          { _id: 'a', org: 'o', n: 15, deep: { seen: 8 }, seven: true },
          { _id: 'b', n: 5, list: [1, 2] },
        ]);
      });

      it('a commit refused part-way leaves nothing of it, and its ops committed again apply exactly once', async () => {
        const collection = uniqueName('unit');
        const nested = { seen: 0 };
        const ops: WriteOp[] = [
          { op: 'replaceOne', collection, filter: { _id: 'a' }, doc: { _id: 'a', n: 0, nested }, upsert: true },
          { op: 'updateOne', collection, filter: { _id: 'a' }, update: { $inc: { n: 1, 'nested.seen': 1 } } },
          { op: 'updateOne', collection, filter: { _id: 'a' }, update: { $push: { list: 'x' } } },
          { op: 'updateOne', collection, filter: { _id: 'a' }, update: { $inc: { n: 1 } } },
        ];
        await store.commit([insertOp(collection, { _id: 'taken' }), insertOp(collection, { _id: 'a', old: true })]);
        expect(await commitError([...ops, insertOp(collection, { _id: 'taken' })])).toBeInstanceOf(DuplicateKeyError);
        expect(await store.find(collection, {}, { sort: { _id: 1 } })).toEqual([{ _id: 'a', old: true }, { _id: 'taken' }]);
        expect(nested).toEqual({ seen: 0 });
        await store.commit(ops);
        expect(await store.findOne(collection, { _id: 'a' })).toEqual({ _id: 'a', n: 2, nested: { seen: 1 }, list: ['x'] });
      });
    });

    describe('reset', () => {
      it('empties the named collections and checkpoints and nothing else', async () => {
        const [first, second, kept] = [uniqueName('reset'), uniqueName('reset'), uniqueName('kept')];
        const [cleared, keptCheckpoint] = [uniqueName('cp'), uniqueName('cp')];
        await store.commit([insertOp(first, { _id: 'a' }), insertOp(second, { _id: 'b' }), insertOp(kept, { _id: 'c' })], {
          name: cleared,
          position: 9,
        });
        await store.commit([], { name: keptCheckpoint, position: 4 });

        await store.reset([first, second], [cleared]);

        expect(await store.count(first, {})).toBe(0);
        expect(await store.count(second, {})).toBe(0);
        expect(await sortedIds(kept)).toEqual(['c']);
        expect(await store.getCheckpoint(cleared)).toBeNull();
        expect(await store.getCheckpoint(keptCheckpoint)).toBe(4);
        // A rebuild replays from the start: a low position applies again.
        await expect(store.commit([insertOp(first, { _id: 'a' })], { name: cleared, position: 1 })).resolves.toBe(true);
      });
    });

    describe('ensureIndex', () => {
      it('is idempotent, and the collection works as before', async () => {
        const collection = uniqueName('indexed');

        for (let attempt = 0; attempt < 2; attempt++) {
          await store.ensureIndex(collection, { org_id: 1, created_at: -1 });
          await store.ensureIndex(collection, { name: 1 }, { unique: true });
        }
        await insertAll(collection, [
          { _id: 'a', org_id: 'o1', name: 'one', created_at: '1' },
          { _id: 'b', org_id: 'o1', name: 'two', created_at: '2' },
        ]);

        expect(idsOf(await store.find(collection, { org_id: 'o1' }, { sort: { created_at: -1 } }))).toEqual(['b', 'a']);
      });
    });
  });
}
