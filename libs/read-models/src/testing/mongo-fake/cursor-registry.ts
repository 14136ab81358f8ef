import { Long, type Document } from 'bson';
import { CommandError } from './command-error';

const DEFAULT_FIRST_BATCH = 101;

/** Open cursors: the rest of a find/aggregate result, handed out in batches by getMore. */
export class CursorRegistry {
  private readonly open = new Map<number, { namespace: string; remaining: Document[] }>();
  private nextId = 1;

  /** The `cursor` reply of find/aggregate; keeps the documents beyond the first batch for getMore. */
  first(namespace: string, documents: Document[], batchSize?: number, singleBatch = false): Document {
    const size = batchSize || DEFAULT_FIRST_BATCH;
    const remaining = documents.slice(size);
    let id = 0;
    if (remaining.length > 0 && !singleBatch) {
      id = this.nextId++;
      this.open.set(id, { namespace, remaining });
    }
    return { cursor: { id: Long.fromNumber(id), ns: namespace, firstBatch: documents.slice(0, size) } };
  }

  more(id: number, batchSize?: number): Document {
    const cursor = this.open.get(id);
    if (!cursor) throw new CommandError(43, 'CursorNotFound', `cursor id ${id} not found`);
    const nextBatch = cursor.remaining.splice(0, batchSize || cursor.remaining.length);
    if (cursor.remaining.length === 0) this.open.delete(id);
    const nextId = this.open.has(id) ? id : 0;
    return { cursor: { id: Long.fromNumber(nextId), ns: cursor.namespace, nextBatch } };
  }

  kill(ids: number[]): Document {
    for (const id of ids) this.open.delete(id);
    return { cursorsKilled: ids.map((id) => Long.fromNumber(id)), cursorsNotFound: [], cursorsAlive: [], cursorsUnknown: [] };
  }
}
