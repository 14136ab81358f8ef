import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import type { Query } from 'mingo/query';
import {
  DuplicateKeyError,
  type Checkpoint,
  type Document,
  type Filter,
  type FindOptions,
  type ReadModelStore,
  type Sort,
  type Update,
  type WriteOp,
} from '../read-model-store.port';
import { inSortOrder, sortDocuments } from './document-sort';
import { applyUpdate, replaceDocument, upsertedDocument } from './document-updates';
import { equalityTest } from './equality-filter';
import { sortByIds } from './id-order';
import { idsNamedByFilter } from './ids-named-by-filter';
import { IndexLookup } from './index-lookup';
import { lookupIndexSql, uniqueIndexSql } from './json-index-sql';
import { mingoQuery } from './mingo-query';
import { UnitDocuments } from './unit-documents';

const DOCUMENTS = 'read_model_documents';
const CHECKPOINTS = 'read_model_checkpoints';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS ${DOCUMENTS} (
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (collection, id)
  );
  CREATE TABLE IF NOT EXISTS ${CHECKPOINTS} (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL
  );
`;

export interface SqliteReadModelStoreOptions {
  /** How long a write waits for another connection's (or process's) transaction. */
  busyTimeoutMs?: number;
}

/**
 * The embedded read-model store: JSON documents in one SQLite table, filters, sorts and update
 * operators evaluated by mingo. WAL mode, so several processes can open the same file.
 *
 * Candidates for a filter are read by primary key when it names `_id`s, through an index of
 * `ensureIndex` when it pins the index's leading fields, else by scanning the collection; mingo
 * then tests the filter on each, so the index only narrows what is parsed and tested. A sort by
 * the fields an index holds after the pinned ones is read in the index's order.
 */
export class SqliteReadModelStore implements ReadModelStore {
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly indexLookup: IndexLookup;
  private readonly commitUnit: Database.Transaction<(ops: WriteOp[], checkpoint?: Checkpoint) => boolean>;
  private readonly resetUnit: Database.Transaction<(collections: string[], checkpointNames: string[]) => void>;
  /** Emits 'committed' (the unit's checkpoint) after each applied commit (onCommitted). */
  private readonly committed = new EventEmitter().setMaxListeners(0);
  /** The documents the commit being applied has read by `_id` and changed (null outside a commit). */
  private unit: UnitDocuments | null = null;

  static open(filename: string, options: SqliteReadModelStoreOptions = {}): SqliteReadModelStore {
    // The busy timeout is set on open, before the first statement that may need a lock.
    const db = new Database(filename, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma('journal_mode = WAL');
    // No fsync per commit: read models are derived from the log (which is synchronous = FULL) and
    // each unit holds its checkpoint, so a power loss can only take the last units back, whole
    // and in order (WAL), and the projector applies them again. A process crash loses nothing.
    db.pragma('synchronous = NORMAL');
    db.exec(SCHEMA);
    return new SqliteReadModelStore(db);
  }

  private constructor(private readonly db: Database.Database) {
    this.statements = prepareStatements(db);
    this.indexLookup = new IndexLookup(db, DOCUMENTS);

    // The checkpoint guard and every op share one transaction: all of it commits, or none.
    this.commitUnit = db.transaction((ops: WriteOp[], checkpoint?: Checkpoint): boolean => {
      if (checkpoint) {
        const stored = this.statements.selectCheckpoint.get(checkpoint.name);
        if (stored !== undefined && stored >= checkpoint.position) return false;
      }
      this.unit = new UnitDocuments(
        (collection, id) => this.statements.selectJson.get(collection, id),
        (collection, id, json) => this.translatingConstraints(collection, id, () => this.statements.update.run(json, collection, id)),
      );
      try {
        for (const op of ops) this.apply(op);
        this.unit.writeBack();
      } finally {
        this.unit = null;
      }
      if (checkpoint) this.statements.upsertCheckpoint.run(checkpoint.name, checkpoint.position);
      return true;
    });

    this.resetUnit = db.transaction((collections: string[], checkpointNames: string[]) => {
      for (const collection of collections) this.statements.deleteCollection.run(collection);
      for (const name of checkpointNames) this.statements.deleteCheckpoint.run(name);
    });
  }

  async find<T extends Document = Document>(collection: string, filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const sorted = (options.sort ? this.sortedMatching(collection, filter, options.sort) : this.matching(collection, filter)) as T[];
    const skip = options.skip ?? 0;
    return options.limit ? sorted.slice(skip, skip + options.limit) : skip ? sorted.slice(skip) : sorted;
  }

  async findOne<T extends Document = Document>(collection: string, filter: Filter): Promise<T | null> {
    const [doc] = this.matching(collection, filter, 1);
    return (doc as T | undefined) ?? null;
  }

  async count(collection: string, filter: Filter): Promise<number> {
    if (Object.keys(filter).length === 0) return this.statements.countCollection.get(collection) ?? 0;
    return this.matching(collection, filter).length;
  }

  async commit(ops: WriteOp[], checkpoint?: Checkpoint): Promise<boolean> {
    // IMMEDIATE takes the write lock up front, so the checkpoint read cannot go stale before the writes.
    const applied = this.commitUnit.immediate(ops, checkpoint);
    if (applied) this.committed.emit('committed', checkpoint ?? null);
    return applied;
  }

  onCommitted(listener: (checkpoint: Checkpoint | null) => void): () => void {
    this.committed.on('committed', listener);
    return () => this.committed.off('committed', listener);
  }

  async getCheckpoint(name: string): Promise<number | null> {
    return this.statements.selectCheckpoint.get(name) ?? null;
  }

  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    this.resetUnit.immediate(collections, checkpointNames);
  }

  /**
   * A lookup index over the fields (their directions do not matter: lookups pin values, and
   * SQLite walks an index either way for a sort), and for `unique` also the index that enforces
   * it. `_id` alone is the primary key.
   */
  async ensureIndex(collection: string, keys: Sort, options: { unique?: boolean } = {}): Promise<void> {
    const index = { collection, fields: Object.keys(keys) };
    if (index.fields.length === 1 && index.fields[0] === '_id') return;
    this.db.exec(lookupIndexSql(DOCUMENTS, index));
    if (options.unique) this.db.exec(uniqueIndexSql(DOCUMENTS, index));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /**
   * The documents that may match `filter`, parsed as they are iterated, and what of the filter is
   * left to test on them: by primary key when the filter names `_id`s (then nothing is left when
   * it only names them: testing a long `$in` again would rehash it for every document), through
   * the lookup index that pins most of the filter's equalities, else the whole collection.
   */
  private candidates(collection: string, filter: Filter): { candidates: Iterable<Document>; residual: Filter } {
    const ids = idsNamedByFilter(filter);
    if (ids) return { candidates: this.unit ? this.unitDocuments(this.unit, collection, ids) : parsed(this.jsonOfIds(collection, ids)), residual: Object.keys(filter).length === 1 ? {} : filter };
    // Inside a commit, the table is read only once it holds what the commit changed so far.
    this.unit?.writeBack();
    const jsons = this.indexLookup.candidatesOf(collection, filter) ?? this.statements.selectCollection.all(collection);
    return { candidates: parsed(jsons), residual: filter };
  }

  private *unitDocuments(unit: UnitDocuments, collection: string, ids: string[]): Generator<Document> {
    for (const id of ids) {
      const doc = unit.get(collection, id);
      if (doc) yield doc;
    }
  }

  private *jsonOfIds(collection: string, ids: string[]): Generator<string> {
    for (const id of ids) {
      const json = this.statements.selectJson.get(collection, id);
      if (json !== undefined) yield json;
    }
  }

  /** Documents matching `filter`, stopping after `limit`. */
  private matching(collection: string, filter: Filter, limit = Infinity): Document[] {
    const { candidates, residual } = this.candidates(collection, filter);
    return tested(candidates, residual, limit);
  }

  /**
   * Documents matching `filter` in the order of `sort`. An index holding the sort's keys after the
   * fields the filter pins gives the candidates in that order (SQLite's): kept when it is exactly
   * sortDocuments' order, as it is for strings and numbers without ties, so nothing is sorted,
   * neither by `_id` nor by the keys; otherwise put back in `_id` order (a scan's) and sorted.
   */
  private sortedMatching(collection: string, filter: Filter, sort: Sort): Document[] {
    if (!idsNamedByFilter(filter)) {
      this.unit?.writeBack();
      const inOrder = this.indexLookup.candidatesInOrderOf(collection, filter, sort);
      if (inOrder) {
        const matches = tested(parsed(inOrder), filter);
        return inSortOrder(matches, sort) ? matches : sortDocuments(sortByIds(matches, (doc) => doc._id), sort);
      }
    }
    return sortDocuments(this.matching(collection, filter), sort);
  }

  private apply(op: WriteOp): void {
    switch (op.op) {
      case 'insertOne':
        return this.insert(op.collection, op.doc);
      case 'updateOne':
        return this.update(op.collection, op.filter, op.update, 1, op.upsert ?? false);
      case 'updateMany':
        return this.update(op.collection, op.filter, op.update, Infinity, false);
      case 'replaceOne': {
        const [existing] = this.matching(op.collection, op.filter, 1);
        // Shallow: the replacement's values are the op's own.
        if (existing) return this.write(op.collection, replaceDocument(existing, op.doc), false);
        if (op.upsert) this.insert(op.collection, upsertedDocument(op.filter, op.doc));
        return;
      }
      case 'deleteOne':
      case 'deleteMany':
        for (const doc of this.matching(op.collection, op.filter, op.op === 'deleteOne' ? 1 : Infinity)) {
          this.statements.delete.run(op.collection, doc._id);
          this.unit?.deleted(op.collection, doc._id);
        }
        return;
      default:
        throw new Error(`unknown write op: ${(op as { op: unknown }).op}`);
    }
  }

  private update(collection: string, filter: Filter, update: Update, limit: number, upsert: boolean): void {
    const matches = this.matching(collection, filter, limit);
    if (matches.length === 0 && upsert) return this.insert(collection, upsertedDocument(filter, update));
    const { docs, sharesValues } = applyUpdate(matches, update);
    for (const doc of docs) this.write(collection, doc, !sharesValues);
  }

  private insert(collection: string, doc: Document): void {
    if (typeof doc._id !== 'string') throw new TypeError(`a document in ${collection} needs a string _id`);
    const json = JSON.stringify(doc);
    this.translatingConstraints(collection, doc._id, () => this.statements.insert.run(collection, doc._id, json));
    this.unit?.stored(collection, doc._id, json);
  }

  /** The document changed; inside a commit it is written when the commit ends (`owned`: nothing outside the store holds any part of it). */
  private write(collection: string, doc: Document, owned: boolean): void {
    if (this.unit) return this.unit.changed(collection, doc, owned);
    this.translatingConstraints(collection, doc._id, () => this.statements.update.run(JSON.stringify(doc), collection, doc._id));
  }

  /** The primary key and unique indexes report a clash as the port's DuplicateKeyError. */
  private translatingConstraints(collection: string, id: string, write: () => unknown): void {
    try {
      write();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') throw new DuplicateKeyError(collection, id);
      throw error;
    }
  }
}

/** Prepared once per connection: every call reuses them. */
function prepareStatements(db: Database.Database) {
  return {
    selectJson: db.prepare<[string, string], string>(`SELECT json FROM ${DOCUMENTS} WHERE collection = ? AND id = ?`).pluck(),
    selectCollection: db.prepare<[string], string>(`SELECT json FROM ${DOCUMENTS} WHERE collection = ?`).pluck(),
    countCollection: db.prepare<[string], number>(`SELECT COUNT(*) FROM ${DOCUMENTS} WHERE collection = ?`).pluck(),
    insert: db.prepare(`INSERT INTO ${DOCUMENTS} (collection, id, json) VALUES (?, ?, ?)`),
    update: db.prepare(`UPDATE ${DOCUMENTS} SET json = ? WHERE collection = ? AND id = ?`),
    delete: db.prepare(`DELETE FROM ${DOCUMENTS} WHERE collection = ? AND id = ?`),
    deleteCollection: db.prepare(`DELETE FROM ${DOCUMENTS} WHERE collection = ?`),
    selectCheckpoint: db.prepare<[string], number>(`SELECT position FROM ${CHECKPOINTS} WHERE name = ?`).pluck(),
    upsertCheckpoint: db.prepare(
      `INSERT INTO ${CHECKPOINTS} (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position`,
    ),
    deleteCheckpoint: db.prepare(`DELETE FROM ${CHECKPOINTS} WHERE name = ?`),
  };
}

/**
 * The candidates that match `filter`, stopping after `limit`. Equalities are tested directly;
 * mingo's query, compiled once per call and only when needed, decides everything else.
 */
function tested(candidates: Iterable<Document>, filter: Filter, limit = Infinity): Document[] {
  const equalities = equalityTest(filter);
  let query: Query<Document> | undefined;
  const test = (doc: Document) => equalities?.(doc) ?? (query ??= mingoQuery<Document>(filter)).test(doc);
  const matches: Document[] = [];
  for (const doc of candidates) {
    if (matches.length >= limit) break;
    if (test(doc)) matches.push(doc);
  }
  return matches;
}

function* parsed(jsons: Iterable<string>): Generator<Document> {
  for (const json of jsons) yield JSON.parse(json) as Document;
}
