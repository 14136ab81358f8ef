import type Database from 'better-sqlite3';
import type { Filter } from '../read-model-store.port';
import { equalityFields } from './document-updates';
import { lookupIndexNamed, lookupIndexNamesSql, lookupSql, type LookupIndex } from './json-index-sql';

/** A value bound to `json_extract(json, path) IS ?`. */
type SqlValue = string | number | null;

/**
 * Reads a filter's candidates through the lookup indexes `ensureIndex` created (by any connection
 * to the file: the indexes are read again from the schema whenever its version moved). The
 * candidates are a superset of the matches, ordered by `_id`: the caller still tests the filter.
 */
export class IndexLookup {
  private indexes = new Map<string, LookupIndex[]>();
  private schemaVersion: number | undefined;
  /** Prepared once per index and number of pinned fields. */
  private readonly statements = new Map<string, Database.Statement<SqlValue[], { id: string; json: string }>>();
  private readonly selectSchemaVersion: Database.Statement<[], number>;
  private readonly selectIndexNames: Database.Statement<[], string>;

  constructor(
    private readonly db: Database.Database,
    private readonly table: string,
  ) {
    this.selectSchemaVersion = db.prepare<[], number>('PRAGMA schema_version').pluck();
    this.selectIndexNames = db.prepare<[], string>(lookupIndexNamesSql(table)).pluck();
  }

  /** The JSON of the candidates for `filter` in `_id` order, or undefined when it pins no index's first field. */
  candidatesOf(collection: string, filter: Filter): string[] | undefined {
    const lookup = bestLookup(filter, this.indexesOf(collection));
    if (!lookup) return undefined;
    const rows = this.statement(lookup.index, lookup.values.length).all(...lookup.values);
    const utf16OrderHolds = rows.every((row) => !SURROGATE_OR_ABOVE.test(row.id));
    rows.sort(utf16OrderHolds ? (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : (a, b) => compareIds(a.id, b.id));
    return rows.map((row) => row.json);
  }

  private indexesOf(collection: string): LookupIndex[] {
    const version = this.selectSchemaVersion.get();
    if (version !== this.schemaVersion) {
      this.indexes = new Map();
      for (const name of this.selectIndexNames.all()) {
        const index = lookupIndexNamed(this.table, name);
        this.indexes.set(index.collection, [...(this.indexes.get(index.collection) ?? []), index]);
      }
      this.schemaVersion = version;
    }
    return this.indexes.get(collection) ?? [];
  }

  private statement(index: LookupIndex, pinned: number): Database.Statement<SqlValue[], { id: string; json: string }> {
    const key = `${index.name}/${pinned}`;
    let statement = this.statements.get(key);
    if (!statement) {
      statement = this.db.prepare<SqlValue[], { id: string; json: string }>(lookupSql(this.table, index, pinned));
      this.statements.set(key, statement);
    }
    return statement;
  }
}

/**
 * Of the indexes whose leading fields the filter pins by equality (`{a: v}`, `{a: {$eq: v}}`, also
 * inside a top-level `$and`), the one that pins the most, with the values to bind in its order.
 */
function bestLookup(filter: Filter, indexes: readonly LookupIndex[]): { index: LookupIndex; values: SqlValue[] } | undefined {
  if (indexes.length === 0) return undefined;
  const pinned = equalityFields(filter);
  let best: { index: LookupIndex; values: SqlValue[] } | undefined;
  for (const index of indexes) {
    const values: SqlValue[] = [];
    for (const field of index.fields) {
      const value = Object.hasOwn(pinned, field) ? sqlValueOf(pinned[field]) : undefined;
      if (value === undefined) break;
      values.push(value);
    }
    if (values.length > (best?.values.length ?? 0)) best = { index, values };
  }
  return best;
}

/**
 * What `json_extract` yields for a field equal to `value`, or undefined when SQL cannot find every
 * such field: strings as they are; booleans as 1/0 (a candidate holding the number 1 or 0 is then
 * rejected by mingo); null as NULL, which `IS ?` finds for null and missing fields alike; numbers
 * only as safe integers, since SQLite reads a longer integer exactly where JavaScript rounded it,
 * and a fraction would rely on both parsing its text to the same double. Objects and arrays are
 * never pinned.
 */
function sqlValueOf(value: unknown): SqlValue | undefined {
  if (value === null || typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  return undefined;
}

/** Past the basic multilingual plane's lower part, UTF-16 order (JavaScript's) and UTF-8 order (SQLite's) differ. */
const SURROGATE_OR_ABOVE = /[\uD800-\uFFFF]/;

/** Two ids in the order SQLite's ORDER BY id (BINARY: UTF-8 bytes) gives, as a scan of the collection reads them. */
export function compareIds(a: string, b: string): number {
  if (SURROGATE_OR_ABOVE.test(a) || SURROGATE_OR_ABOVE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}
