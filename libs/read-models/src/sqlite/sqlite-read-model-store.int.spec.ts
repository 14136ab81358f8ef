import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DuplicateKeyError, type Document, type ReadModelStore, type Sort } from '../read-model-store.port';
import { describeReadModelStoreContract } from '../testing/read-model-store.contract';
import { lookupIndexNamed, lookupIndexNamesSql, lookupSql, orderedLookupSql } from './json-index-sql';
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

  describe('reads through the indexes of ensureIndex', () => {
    const ORGS = 10;
    const PER_ORG = 100;
    const vms: Document[] = Array.from({ length: ORGS * PER_ORG }, (_, i) => ({
      _id: `vm-${String(i).padStart(4, '0')}`,
      org_id: `org-${i % ORGS}`,
      deleted_at: i % 3 === 0 ? '2024-01-01' : null,
      created_at: `2024-01-01T00:00:${String(i).padStart(4, '0')}`,
    }));
    const seed = (store: ReadModelStore) => store.commit(vms.map((doc) => ({ op: 'insertOne', collection: 'vms', doc })));

    /** What a read returns, and how many stored documents it parsed to answer. */
    const parsing = async <T>(read: () => Promise<T>): Promise<{ result: T; parsed: number }> => {
      const parse = jest.spyOn(JSON, 'parse');
      try {
        const result = await read();
        return { result, parsed: parse.mock.calls.length };
      } finally {
        parse.mockRestore();
      }
    };

    it('parses only the documents whose indexed fields the filter pins, not the collection', async () => {
      const store = openStore();
      await store.ensureIndex('vms', { org_id: 1, deleted_at: 1, created_at: 1 });
      await seed(store);
      const live = vms.filter((vm) => vm.org_id === 'org-3' && vm.deleted_at === null);
      await store.count('vms', { org_id: 'org-0' }); // The first read loads the index list (parsing its names).

      const listed = await parsing(() => store.find('vms', { org_id: 'org-3', deleted_at: null }, { sort: { created_at: 1 } }));
      expect(listed.result).toEqual(live);
      expect(listed.parsed).toBe(live.length);

      const counted = await parsing(() => store.count('vms', { org_id: 'org-3', deleted_at: null }));
      expect(counted).toEqual({ result: live.length, parsed: live.length });

      // A pinned prefix of the index is enough; the rest of the filter is tested on those.
      const prefix = await parsing(() => store.find('vms', { org_id: 'org-3', created_at: { $gte: '2024' } }));
      expect(prefix.result).toHaveLength(PER_ORG);
      expect(prefix.parsed).toBe(PER_ORG);

      // Without a pinned first field there is no index to read through.
      expect((await parsing(() => store.count('vms', { deleted_at: null }))).parsed).toBe(vms.length);
    });

    it('finds through an index in the order a scan of the collection gives (by _id, as SQLite orders text), whatever the characters', async () => {
      const store = openStore();
      await store.ensureIndex('things', { group: 1 });
      const ids = ['b', 'a', 'B', 'é', '\u{1F600}', '\uFF01', 'a-2', 'z', '\uE000'];
      await store.commit(ids.map((_id) => ({ op: 'insertOne', collection: 'things', doc: { _id, group: 'g' } })));
      const scanned = await store.find('things', { group: { $in: ['g'] } }); // no equality to pin: a scan of the collection
      const looked = await store.find('things', { group: 'g' }); // through the index
      expect(looked.map((doc) => doc._id)).toEqual(scanned.map((doc) => doc._id));
      expect(scanned.map((doc) => doc._id)).toEqual(['B', 'a', 'a-2', 'b', 'z', 'é', '\uE000', '\uFF01', '\u{1F600}']);
    });

    it('sorts what an index holds in order exactly as a scan sorted by mingo: ties by _id, mixed types, arrays, characters past U+D7FF', async () => {
      const store = openStore();
      const idsOf = (docs: Document[]) => docs.map((doc) => doc._id);
      const plain = ['a', 'B', 'b', 'é', 'ab'];
      const pastD7ff = ['\uE000', '\u{1F600}', '\uFF01']; // UTF-16 (JavaScript) and UTF-8 (SQLite) order these differently
      let seed = 7;
      const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
      // Rounds 0-2: strings and numbers, where the index's order holds but for ties; then characters
      // past U+D7FF; then what only mingo orders: a missing name, null, a number among the names;
      // then arrays, which the index cannot order.
      const oddities = [[], [], [], pastD7ff, pastD7ff, [undefined, null, 3], [undefined, null, 3], [['b', 'a'], undefined]];
      for (const [round, odd] of oddities.entries()) {
        const collection = `things-${round}`;
        await store.ensureIndex(collection, { group: 1, name: 1, n: 1 });
        const docs: Document[] = Array.from({ length: 40 }, (_, i) => ({
          _id: `${plain[next(plain.length)]}-${next(5)}-${i}`,
          group: 'g',
          name: odd.length && next(4) === 0 ? odd[next(odd.length)] : plain[next(plain.length)],
          n: next(2),
        }));
        // Inserted in an order unlike _id's, so that rowids (the index's order of ties) are not in it.
        await store.commit(docs.reverse().map((doc) => ({ op: 'insertOne', collection, doc })));
        for (const sort of [{ name: 1, n: 1 }, { name: -1, n: -1 }, { name: 1 }] as Sort[]) {
          const scanned = await store.find(collection, { group: { $in: ['g'] } }, { sort }); // no equality to pin: a scan of the collection
          expect(idsOf(await store.find(collection, { group: 'g' }, { sort }))).toEqual(idsOf(scanned));
          expect(idsOf(await store.find(collection, { group: 'g' }, { sort, skip: 5, limit: 10 }))).toEqual(idsOf(scanned).slice(5, 15));
        }
      }
    });

    it('prepares sorted lookups that walk the index in order, sorting nothing, either way', async () => {
      const store = openStore();
      await store.ensureIndex('repositories', { is_public: 1, org_name: 1, name: 1 });
      await store.close();

      const db = new Database(file, { readonly: true });
      try {
        const [index] = db
          .prepare<[], string>(lookupIndexNamesSql('read_model_documents'))
          .pluck()
          .all()
          .map((name) => lookupIndexNamed('read_model_documents', name));
        for (const direction of [1, -1] as const) {
          for (const [pinned, ordered] of [[1, 2], [1, 1], [2, 1]]) {
            const plan = db
              .prepare(`EXPLAIN QUERY PLAN ${orderedLookupSql('read_model_documents', index, pinned, ordered, direction)}`)
              .all(...Array<null>(pinned).fill(null))
              .map((row) => (row as { detail: string }).detail);
            expect(plan).toEqual([`SEARCH read_model_documents USING INDEX ${index.name} (${Array<string>(pinned + 1).fill('<expr>=?').join(' AND ')})`]);
          }
        }
      } finally {
        db.close();
      }
    });

    it("uses an index another connection created, before or after this store's opening", async () => {
      const early = openStore();
      const creator = openStore();
      await seed(creator);
      expect(await early.count('vms', { org_id: 'org-7' })).toBe(PER_ORG);
      await creator.ensureIndex('vms', { org_id: 1 });
      const late = openStore();

      for (const store of [early, late]) {
        await store.count('vms', { org_id: 'org-0' }); // The index list is read again (parsing its names).
        const found = await parsing(() => store.count('vms', { org_id: 'org-7' }));
        expect(found).toEqual({ result: PER_ORG, parsed: PER_ORG });
      }
    });

    it('prepares lookups that SEARCH the index on every pinned field', async () => {
      const store = openStore();
      await store.ensureIndex('vms', { org_id: 1, deleted_at: 1, created_at: -1 });
      await store.ensureIndex('vms', { 'meta.zone': 1 });
      await store.close();

      const db = new Database(file, { readonly: true });
      try {
        const indexes = db
          .prepare<[], string>(lookupIndexNamesSql('read_model_documents'))
          .pluck()
          .all()
          .map((name) => lookupIndexNamed('read_model_documents', name));
        expect(indexes.map(({ collection, fields }) => ({ collection, fields }))).toEqual(
          expect.arrayContaining([
            { collection: 'vms', fields: ['org_id', 'deleted_at', 'created_at'] },
            { collection: 'vms', fields: ['meta.zone'] },
          ]),
        );
        for (const index of indexes) {
          for (let pinned = 1; pinned <= index.fields.length; pinned++) {
            const plan = db
              .prepare(`EXPLAIN QUERY PLAN ${lookupSql('read_model_documents', index, pinned)}`)
              .all(...Array<null>(pinned).fill(null))
              .map((row) => (row as { detail: string }).detail);
            const searches = plan.filter((detail) => detail.startsWith('SEARCH read_model_documents'));
            expect(searches).toEqual([
              `SEARCH read_model_documents USING INDEX ${index.name} (${Array<string>(pinned + 1).fill('<expr>=?').join(' AND ')})`,
              `SEARCH read_model_documents USING INDEX ${index.name} (<expr>=?)`,
            ]);
            expect(plan.some((detail) => detail.startsWith('SCAN read_model_documents'))).toBe(false);
          }
        }
      } finally {
        db.close();
      }
    });
  });
});
