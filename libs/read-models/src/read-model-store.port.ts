/**
 * The read-model store port: a small subset of MongoDB. Documents are plain JSON objects with a
 * string `_id`; filters, update operators and sort documents are MongoDB's own syntax, so the
 * MongoDB adapter passes them through and the SQLite adapter evaluates them (with mingo).
 *
 * Supported filter operators: equality, $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or,
 * dotted paths. Update operators: $set $unset $inc $push $setOnInsert (an update document
 * without operators is a replacement).
 */
export type Document = { _id: string; [field: string]: unknown };
export type Filter = Record<string, unknown>;
export type Update = Record<string, unknown>;
export type Sort = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: Sort;
  skip?: number;
  limit?: number;
}

export type WriteOp =
  | { op: 'insertOne'; collection: string; doc: Document }
  | { op: 'updateOne'; collection: string; filter: Filter; update: Update; upsert?: boolean }
  | { op: 'updateMany'; collection: string; filter: Filter; update: Update }
  | { op: 'replaceOne'; collection: string; filter: Filter; doc: Document; upsert?: boolean }
  | { op: 'deleteOne'; collection: string; filter: Filter }
  | { op: 'deleteMany'; collection: string; filter: Filter };

/** A checkpoint: how far in the global log a named consumer (a projector, a worker) has applied. */
export interface Checkpoint {
  name: string;
  /** Global log position of the last applied event. */
  position: number;
}

export interface ReadModelStore {
  find<T extends Document = Document>(collection: string, filter: Filter, options?: FindOptions): Promise<T[]>;
  findOne<T extends Document = Document>(collection: string, filter: Filter): Promise<T | null>;
  count(collection: string, filter: Filter): Promise<number>;
  /**
   * Applies `ops` in order and advances `checkpoint`, all in one atomic unit: either everything
   * commits or nothing does. With a checkpoint, the unit is applied only if the stored position
   * for that name is lower than checkpoint.position (or absent); otherwise nothing is written and
   * the call returns false: an event is never applied twice. Returns true when applied.
   * insertOne on an existing _id throws DuplicateKeyError (and nothing of the unit is applied).
   */
  commit(ops: WriteOp[], checkpoint?: Checkpoint): Promise<boolean>;
  /** The stored position for `name`, or null when none is stored. */
  getCheckpoint(name: string): Promise<number | null>;
  /**
   * Calls `listener` with the unit's checkpoint (null without one) after each commit made through
   * this object applied, so that a reader in the same process waiting for the read models looks
   * again at once rather than at its next poll. Commits by other processes call nothing here:
   * readers keep polling for those. Returns what removes the listener.
   */
  onCommitted(listener: (checkpoint: Checkpoint | null) => void): () => void;
  /** Deletes every document of the given collections and the given checkpoints (for rebuilds). */
  reset(collections: string[], checkpointNames: string[]): Promise<void>;
  /** Creates an index (idempotent); adapters may treat it as a hint. */
  ensureIndex(collection: string, keys: Sort, options?: { unique?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export class DuplicateKeyError extends Error {
  constructor(readonly collection: string, readonly id: string) {
    super(`duplicate key in ${collection}: ${id}`);
    this.name = 'DuplicateKeyError';
  }
}

/** Nest injection token for the ReadModelStore port. */
export const READ_MODEL_STORE = Symbol('READ_MODEL_STORE');
