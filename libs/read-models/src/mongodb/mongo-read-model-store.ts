import { EventEmitter } from 'node:events';
import { MongoClient, MongoServerError, type ClientSession, type Collection, type Db } from 'mongodb';
import {
  DuplicateKeyError,
  type Checkpoint,
  type Document,
  type Filter,
  type FindOptions,
  type ReadModelStore,
  type Sort,
  type WriteOp,
} from '../read-model-store.port';

/** Checkpoints live beside the read models: `{ _id: name, position }`. */
const CHECKPOINTS = 'checkpoints';
const DEFAULT_DATABASE = 'arbor';
const DUPLICATE_KEY = 11000;

export interface MongoReadModelStoreOptions {
  /** Overrides the database named in the URL (default: the URL's, else "arbor"). */
  databaseName?: string;
}

/**
 * The read-model store on MongoDB. Filters, updates and sorts are MongoDB's own syntax, so they
 * pass straight through. commit() runs in a transaction (MongoDB needs a replica set for that).
 */
export class MongoReadModelStore implements ReadModelStore {
  /** Emits 'committed' (the unit's checkpoint) after each applied commit (onCommitted). */
  private readonly committed = new EventEmitter().setMaxListeners(0);

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  static async connect(url: string, options: MongoReadModelStoreOptions = {}): Promise<MongoReadModelStore> {
    const client = await MongoClient.connect(url);
    return new MongoReadModelStore(client, client.db(options.databaseName ?? databaseNameIn(url) ?? DEFAULT_DATABASE));
  }

  async find<T extends Document = Document>(collection: string, filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const { sort, skip, limit } = options;
    return (await this.collection(collection).find(filter, { sort, skip, limit }).toArray()) as T[];
  }

  async findOne<T extends Document = Document>(collection: string, filter: Filter): Promise<T | null> {
    return (await this.collection(collection).findOne(filter)) as T | null;
  }

  count(collection: string, filter: Filter): Promise<number> {
    return this.collection(collection).countDocuments(filter);
  }

  async commit(ops: WriteOp[], checkpoint?: Checkpoint): Promise<boolean> {
    const applied = await this.inTransaction(async (session) => {
      if (checkpoint && !(await this.advanceCheckpoint(checkpoint, session))) {
        // Already applied: write nothing (a real server has already aborted on the duplicate key).
        await session.abortTransaction();
        return false;
      }
      for (const op of ops) await this.apply(op, session);
      return true;
    });
    if (applied) this.committed.emit('committed', checkpoint ?? null);
    return applied;
  }

  onCommitted(listener: (checkpoint: Checkpoint | null) => void): () => void {
    this.committed.on('committed', listener);
    return () => this.committed.off('committed', listener);
  }

  async getCheckpoint(name: string): Promise<number | null> {
    const stored = await this.collection(CHECKPOINTS).findOne({ _id: name });
    return typeof stored?.position === 'number' ? stored.position : null;
  }

  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    // One transaction: a crash must not leave a checkpoint pointing past deleted documents.
    await this.inTransaction(async (session) => {
      for (const collection of collections) await this.collection(collection).deleteMany({}, { session });
      await this.collection(CHECKPOINTS).deleteMany({ _id: { $in: checkpointNames } }, { session });
    });
  }

  async ensureIndex(collection: string, keys: Sort, options: { unique?: boolean } = {}): Promise<void> {
    await this.collection(collection).createIndex(keys, { unique: options.unique ?? false });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /**
   * The guard: one conditional upsert that only matches a stored position lower than the new one.
   * When the stored position is not lower, the filter misses and the upsert collides with the
   * existing _id (duplicate key): the event was already applied.
   */
  private async advanceCheckpoint({ name, position }: Checkpoint, session: ClientSession): Promise<boolean> {
    try {
      await this.collection(CHECKPOINTS).updateOne(
        { _id: name, position: { $lt: position } },
        { $set: { position } },
        { upsert: true, session },
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  private async apply(op: WriteOp, session: ClientSession): Promise<void> {
    const collection = this.collection(op.collection);
    try {
      switch (op.op) {
        case 'insertOne':
          await collection.insertOne(op.doc, { session });
          return;
        case 'updateOne':
          // The port allows a replacement document here; the driver wants replaceOne for that.
          if (isReplacement(op.update)) await collection.replaceOne(op.filter, op.update, { upsert: op.upsert, session });
          else await collection.updateOne(op.filter, op.update, { upsert: op.upsert, session });
          return;
        case 'updateMany':
          await collection.updateMany(op.filter, op.update, { session });
          return;
        case 'replaceOne':
          await collection.replaceOne(op.filter, op.doc, { upsert: op.upsert, session });
          return;
        case 'deleteOne':
          await collection.deleteOne(op.filter, { session });
          return;
        case 'deleteMany':
          await collection.deleteMany(op.filter, { session });
          return;
      }
    } catch (error) {
      if (isDuplicateKey(error)) throw new DuplicateKeyError(op.collection, duplicateId(op, error));
      throw error;
    }
  }

  /** Runs `work` in a transaction; withTransaction retries it on transient errors (write conflicts). */
  private async inTransaction<T>(work: (session: ClientSession) => Promise<T>): Promise<T> {
    const session = this.client.startSession();
    try {
      return await session.withTransaction(() => work(session));
    } finally {
      await session.endSession();
    }
  }

  /** Untyped documents: the port's filters and updates are plain MongoDB syntax already. */
  private collection(name: string): Collection<any> {
    return this.db.collection(name);
  }
}

function isReplacement(update: Record<string, unknown>): boolean {
  return !Object.keys(update).some((key) => key.startsWith('$'));
}

function isDuplicateKey(error: unknown): error is MongoServerError {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/** The _id the failed write was about: the written document's, else the filter's, else the clashing key. */
function duplicateId(op: WriteOp, error: MongoServerError): string {
  if (op.op === 'insertOne' || op.op === 'replaceOne') return op.doc._id;
  if ('filter' in op && typeof op.filter._id === 'string') return op.filter._id;
  return JSON.stringify(error.keyValue ?? {});
}

/** The database in a connection string's path (`mongodb://host:port/<db>?…`), if any. */
function databaseNameIn(url: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(url)?.[1];
  return path ? decodeURIComponent(path) : undefined;
}
