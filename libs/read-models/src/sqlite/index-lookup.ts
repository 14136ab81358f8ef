import type Database from 'better-sqlite3';
import type { Filter, Sort } from '../read-model-store.port';
import { equalityFields } from './document-updates';
import { sortByIds } from './id-order';
import { anyArrayOnIndexSql, lookupIndexNamed, lookupIndexNamesSql, lookupSql, orderedLookupSql, type LookupIndex } from './json-index-sql';

/** A value bound to `json_extract(json, path) IS ?`. */
type SqlValue = string | number | null;

/** An index and the values of its leading fields that a filter pins, in the index's order. */
interface Lookup {
  index: LookupIndex;
  values: SqlValue[];
}

/**
 * Reads a filter's candidates through the lookup indexes `ensureIndex` created (by any connection
 * to the file: the indexes are read again from the schema whenever its version moved). The
 * candidates are a superset of the matches, ordered by `_id` (or, asked for, by a sort's keys):
 * the caller still tests the filter.
 */
export class IndexLookup {
  private indexes = new Map<string, LookupIndex[]>();
  private schemaVersion: number | undefined;
  /** Prepared once per index and shape of lookup. */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly selectSchemaVersion: Database.Statement<[], number>;
  private readonly selectIndexNames: Database.Statement<[], string>;
  private readonly inOneSnapshot: (read: () => string[] | undefined) => string[] | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly table: string,
  ) {
    this.selectSchemaVersion = db.prepare<[], number>('PRAGMA schema_version').pluck();
    this.selectIndexNames = db.prepare<[], string>(lookupIndexNamesSql(table)).pluck();
    this.inOneSnapshot = db.transaction((read: () => string[] | undefined) => read());
  }

  /** The JSON of the candidates for `filter` in `_id` order, or undefined when it pins no index's first field. */
  candidatesOf(collection: string, filter: Filter): string[] | undefined {
    const lookup = bestLookup(lookupsOf(filter, this.indexesOf(collection)));
    if (!lookup) return undefined;
    const { index, values } = lookup;
    const rows = this.prepared<{ id: string; json: string }>(`${index.name}/${values.length}`, () => lookupSql(this.table, index, values.length)).all(...values);
    return sortByIds(rows, (row) => row.id).map((row) => row.json);
  }

  /**
   * The JSON of the candidates for `filter` in the order of `sort`'s keys as SQLite orders their
   * values, read through an index whose fields after the ones the filter pins are those keys (all
   * one direction): SQLite walks the index and sorts nothing, and nothing is sorted by `_id`.
   * Undefined when no index gives that order while pinning as much as the best lookup, or when a
   * document of the collection has an array on the index's paths (the index cannot order it).
   * SQLite's order is not always the one wanted (mixed types, text past U+D7FF): the caller checks.
   */
  candidatesInOrderOf(collection: string, filter: Filter, sort: Sort): string[] | undefined {
    const lookups = lookupsOf(filter, this.indexesOf(collection));
    const lookup = orderedLookup(lookups, sort);
    if (!lookup || lookup.values.length < (bestLookup(lookups)?.values.length ?? 0)) return undefined;
    const { index, values } = lookup;
    const keys = Object.keys(sort).length;
    const direction = Object.values(sort)[0];
    const arrays = this.prepared<number>(`${index.name}/arrays`, () => anyArrayOnIndexSql(this.table, index), { pluck: true });
    const ordered = this.prepared<string>(`${index.name}/${values.length}/ordered ${keys} ${direction}`, () => orderedLookupSql(this.table, index, values.length, keys, direction), {
      pluck: true,
    });
    // Both reads in one snapshot, as one statement would be: no array may come in between.
    return this.inOneSnapshot(() => (arrays.get() ? undefined : ordered.all(...values)));
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

  private prepared<Row>(key: string, sql: () => string, options: { pluck?: boolean } = {}): Database.Statement<SqlValue[], Row> {
    let statement = this.statements.get(key);
    if (!statement) {
      statement = this.db.prepare(sql());
      if (options.pluck) statement.pluck();
      this.statements.set(key, statement);
    }
    return statement as Database.Statement<SqlValue[], Row>;
  }
}

/**
 * Each index whose leading fields the filter pins by equality (`{a: v}`, `{a: {$eq: v}}`, also
 * inside a top-level `$and`), with the values to bind in its order.
 */
function lookupsOf(filter: Filter, indexes: readonly LookupIndex[]): Lookup[] {
  if (indexes.length === 0) return [];
  const pinned = equalityFields(filter);
  const lookups: Lookup[] = [];
  for (const index of indexes) {
    const values: SqlValue[] = [];
    for (const field of index.fields) {
      const value = Object.hasOwn(pinned, field) ? sqlValueOf(pinned[field]) : undefined;
      if (value === undefined) break;
      values.push(value);
    }
    if (values.length > 0) lookups.push({ index, values });
  }
  return lookups;
}

/** The lookup that pins the most fields (the first of equals). */
function bestLookup(lookups: readonly Lookup[]): Lookup | undefined {
  let best: Lookup | undefined;
  for (const lookup of lookups) if (lookup.values.length > (best?.values.length ?? 0)) best = lookup;
  return best;
}

/** The lookup pinning the most fields of those whose next fields are the sort's keys, all sorted one direction. */
function orderedLookup(lookups: readonly Lookup[], sort: Sort): Lookup | undefined {
  const keys = Object.keys(sort);
  const directions = new Set(Object.values(sort));
  if (keys.length === 0 || directions.size !== 1) return undefined;
  const ordering = lookups.filter(({ index, values }) => keys.every((key, k) => index.fields[values.length + k] === key));
  return bestLookup(ordering);
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
