import type { Document } from '../read-model-store.port';

/** A document as the commit left it: parsed (`doc`, null when there is none), or only as JSON until read. */
interface Entry {
  doc?: Document | null;
  json?: string;
  /** Changed by the commit and not yet written to the table. */
  dirty: boolean;
}

/**
 * The documents one commit reads by `_id` and writes, kept while it runs, so that a document a
 * commit changes again and again (a thousand events of one org counted in `event_stats`, in a
 * batched replay) is parsed once and written to the table once, when the commit ends, not once
 * per change. Everything stays in the commit's transaction: a commit that fails writes nothing.
 *
 * A document is kept parsed only when nothing outside the store holds any part of it (one the
 * store parsed and changed with plain updates); one built from a write op's values is kept as
 * its JSON, so that changing it later cannot change the op (which a failed batch commits again).
 * A query that reads the table by anything but `_id` must see what the commit changed: `writeBack`
 * first.
 */
export class UnitDocuments {
  private readonly collections = new Map<string, Map<string, Entry>>();

  constructor(
    /** The document's JSON in the table, or undefined. */
    private readonly read: (collection: string, id: string) => string | undefined,
    /** Writes a changed document to the table (it is there already). */
    private readonly write: (collection: string, id: string, json: string) => void,
  ) {}

  /** The document as the commit has it now, null when there is none. */
  get(collection: string, id: string): Document | null {
    const entries = this.entriesOf(collection);
    let entry = entries.get(id);
    if (!entry) {
      const json = this.read(collection, id);
      entry = json === undefined ? { doc: null, dirty: false } : { json, dirty: false };
      entries.set(id, entry);
    }
    if (entry.doc === undefined) entry.doc = JSON.parse(entry.json!) as Document;
    return entry.doc;
  }

  /** The document changed to `doc`; `owned` when nothing outside the store holds any part of it. */
  changed(collection: string, doc: Document, owned: boolean): void {
    this.entriesOf(collection).set(doc._id, owned ? { doc, dirty: true } : { json: JSON.stringify(doc), dirty: true });
  }

  /** The document was written to the table as `json` (an insert). */
  stored(collection: string, id: string, json: string): void {
    this.entriesOf(collection).set(id, { json, dirty: false });
  }

  /** The document was deleted from the table. */
  deleted(collection: string, id: string): void {
    this.entriesOf(collection).set(id, { doc: null, dirty: false });
  }

  /** Writes every changed document to the table. */
  writeBack(): void {
    for (const [collection, entries] of this.collections) {
      for (const [id, entry] of entries) {
        if (!entry.dirty) continue;
        entry.json ??= JSON.stringify(entry.doc);
        this.write(collection, id, entry.json);
        entry.dirty = false;
        // Kept parsed only while unchanged since: the JSON written is now the truth.
        if (entry.doc !== undefined) entry.json = undefined;
      }
    }
  }

  private entriesOf(collection: string): Map<string, Entry> {
    let entries = this.collections.get(collection);
    if (!entries) this.collections.set(collection, (entries = new Map()));
    return entries;
  }
}
