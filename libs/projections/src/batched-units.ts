import type { Checkpoint, Document, Filter, FindOptions, ReadModelStore, Sort, WriteOp } from '@arbor/read-models';

/** What held writes may have changed in one collection: some documents by `_id`, or any of them. */
type Touched = Set<string> | 'any';

/**
 * A read-model store for replays (rebuilds, time travel) that commits many events' units as one:
 * the projector's `apply` hands it one event's writes and checkpoint at a time, as always; they
 * are held and committed together, with the checkpoint of the last event held, once `maxUnits`
 * are held, before a read that a held write may change (a projection reading an earlier
 * document sees it, as it would event by event; a read of a document no held write names goes
 * to the store as it is), and on `flush()`. A read of one document by `_id` whose last held write
 * made it whole (an insert or an upserting replace by `_id`, as the commits projection writes a
 * commit's ancestors) is answered from that write, without a commit. Each commit holds whole events and names the last of
 * them, so the checkpoint stays exact: a crash leaves the store at the end of a committed batch.
 *
 * Only for a store nothing else writes meanwhile (the live projector, the read models' only
 * writer; a rebuild with the projector stopped; a throwaway store): a checkpoint that moved under
 * the batch is an error, never a skip. One caller at a time: it does not await commits in parallel.
 */
export class BatchedUnits implements ReadModelStore {
  private held: WriteOp[] = [];
  private readonly touched = new Map<string, Touched>();
  /** Per collection, the documents held writes made whole (by `_id`: the document the write holds; null: deleted). */
  private readonly whole = new Map<string, Map<string, Document | null>>();
  private heldUnits = 0;
  private checkpoint: Checkpoint | null = null;
  /** The stored position of each checkpoint name seen, as this store will leave it. */
  private readonly positions = new Map<string, number | null>();

  constructor(
    private readonly store: ReadModelStore,
    private readonly maxUnits = 1000,
  ) {}

  /** Holds the unit; false (nothing held) when its checkpoint is not past the stored one, as the store itself answers. */
  async commit(ops: WriteOp[], checkpoint?: Checkpoint): Promise<boolean> {
    if (!checkpoint || (this.checkpoint && this.checkpoint.name !== checkpoint.name)) await this.flush();
    if (!checkpoint) return this.store.commit(ops);
    const stored = await this.positionOf(checkpoint.name);
    if (stored !== null && stored >= checkpoint.position) return false;
    this.held.push(...ops);
    for (const op of ops) this.touch(op);
    this.heldUnits++;
    this.checkpoint = checkpoint;
    this.positions.set(checkpoint.name, checkpoint.position);
    if (this.heldUnits >= this.maxUnits) await this.flush();
    return true;
  }

  /** Commits what is held as one unit; a commit that fails keeps it held, for the next flush to try again. */
  async flush(): Promise<void> {
    if (!this.checkpoint) return;
    const [ops, checkpoint] = [this.held, this.checkpoint];
    const committed = await this.store.commit(ops, checkpoint);
    this.held = [];
    this.touched.clear();
    this.whole.clear();
    this.heldUnits = 0;
    this.checkpoint = null;
    if (!committed) {
      this.positions.clear();
      throw new Error(`read models: checkpoint ${checkpoint.name} moved past ${checkpoint.position} during a batched replay`);
    }
  }

  async find<T extends Document = Document>(collection: string, filter: Filter, options?: FindOptions): Promise<T[]> {
    await this.flushBeforeReading(collection, filter);
    return this.store.find<T>(collection, filter, options);
  }

  async findOne<T extends Document = Document>(collection: string, filter: Filter): Promise<T | null> {
    const id = onlyId(filter);
    const held = id === null ? undefined : this.whole.get(collection)?.get(id);
    // As the store would answer once the write is committed: its own copy, as JSON holds it.
    if (held !== undefined) return held === null ? null : (JSON.parse(JSON.stringify({ ...held, _id: id })) as T);
    await this.flushBeforeReading(collection, filter);
    return this.store.findOne<T>(collection, filter);
  }

  async count(collection: string, filter: Filter): Promise<number> {
    await this.flushBeforeReading(collection, filter);
    return this.store.count(collection, filter);
  }

  async getCheckpoint(name: string): Promise<number | null> {
    return this.positionOf(name);
  }

  /** Commits reach the store underneath, which tells its listeners. */
  onCommitted(listener: (checkpoint: Checkpoint | null) => void): () => void {
    return this.store.onCommitted(listener);
  }

  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    await this.flush();
    for (const name of checkpointNames) this.positions.delete(name);
    return this.store.reset(collections, checkpointNames);
  }

  ensureIndex(collection: string, keys: Sort, options?: { unique?: boolean }): Promise<void> {
    return this.store.ensureIndex(collection, keys, options);
  }

  /** Flushes; the store underneath stays open (its owner closes it). */
  async close(): Promise<void> {
    await this.flush();
  }

  /** Flushes unless no held write can change what the read finds (its collection untouched, or the one `_id` it names). */
  private async flushBeforeReading(collection: string, filter: Filter): Promise<void> {
    const touched = this.touched.get(collection);
    if (touched === undefined) return;
    const id = onlyId(filter);
    if (touched === 'any' || id === null || touched.has(id)) await this.flush();
  }

  private touch(op: WriteOp): void {
    const id = op.op === 'insertOne' ? op.doc._id : onlyId(op.filter);
    const touched = this.touched.get(op.collection) ?? new Set<string>();
    if (id === null || touched === 'any') this.touched.set(op.collection, 'any');
    else this.touched.set(op.collection, touched.add(id));
    const whole = this.whole.get(op.collection) ?? new Map<string, Document | null>();
    this.whole.set(op.collection, whole);
    if (id === null) whole.clear();
    else if (op.op === 'insertOne' || (op.op === 'replaceOne' && op.upsert)) whole.set(id, op.doc);
    else if (op.op === 'deleteOne' || op.op === 'deleteMany') whole.set(id, null);
    else whole.delete(id);
  }

  private async positionOf(name: string): Promise<number | null> {
    if (!this.positions.has(name)) this.positions.set(name, await this.store.getCheckpoint(name));
    return this.positions.get(name) ?? null;
  }
}

/** The `_id` a filter names when it names nothing else (`{_id: 'x'}`), else null. */
function onlyId(filter: Filter): string | null {
  const keys = Object.keys(filter);
  return keys.length === 1 && keys[0] === '_id' && typeof filter._id === 'string' ? filter._id : null;
}
