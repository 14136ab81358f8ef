import { createHash } from 'node:crypto';

/**
 * SQL over the JSON documents of the store's table: the indexes `ensureIndex` creates (partial
 * expression indexes over `json_extract` of the fields, one collection each) and the lookups
 * through them. Collection names are inlined as literals, so that SQLite can match each statement
 * to its collection's partial indexes when preparing it.
 */

/** An index over fields (dotted paths) of one collection's documents. */
export interface JsonIndex {
  collection: string;
  fields: string[];
}

/** A lookup index as found in the schema: its name, its collection and its fields. */
export interface LookupIndex extends JsonIndex {
  name: string;
}

/**
 * DDL for a unique index over JSON fields of one collection (a partial expression index), so that
 * SQLite enforces `ensureIndex(..., { unique: true })` as MongoDB does. One difference remains:
 * documents that lack an indexed field never collide (SQLite NULLs are distinct), where MongoDB
 * treats a missing field as null.
 */
export function uniqueIndexSql(table: string, index: JsonIndex): string {
  const name = `${table}_unique_${createHash('sha256').update(JSON.stringify([index.collection, index.fields])).digest('hex').slice(0, 16)}`;
  return createIndexSql('UNIQUE INDEX', name, table, index, index.fields.map(valueSql));
}

/**
 * DDL for the index that lookups read through. Its first column says whether any indexed path
 * meets an array (the path itself or a prefix of it): MongoDB's equality matches an array's
 * elements, which `json_extract` cannot compare, so those documents are all read back as
 * candidates (`lookupSql`). The other columns are the fields' values. The name spells the
 * collection and the fields, so that a store opened later finds the index in `sqlite_master`.
 */
export function lookupIndexSql(table: string, index: JsonIndex): string {
  return createIndexSql('INDEX', lookupIndexName(table, index), table, index, [crossesArraySql(index.fields), ...index.fields.map(valueSql)]);
}

/** Lists the names of the table's lookup indexes (to decode with `lookupIndexNamed`). */
export function lookupIndexNamesSql(table: string): string {
  return `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ${sqlString(table)} AND name GLOB ${sqlString(`${lookupPrefix(table)}*`)}`;
}

/** The lookup index a name from `lookupIndexNamesSql` stands for. */
export function lookupIndexNamed(table: string, name: string): LookupIndex {
  const [collection, fields] = JSON.parse(Buffer.from(name.slice(lookupPrefix(table).length), 'hex').toString('utf8')) as [string, string[]];
  return { name, collection, fields };
}

/**
 * SELECT of the `id` and JSON of the documents whose first `pinned` indexed fields hold the bound
 * values (`IS ?`: a bound NULL finds null and missing fields), plus every document where an
 * indexed path meets an array; in no particular order (the caller orders them: an ORDER BY here
 * would copy every document's JSON through a temporary sort).
 */
export function lookupSql(table: string, index: LookupIndex, pinned: number): string {
  const from = `SELECT id, json FROM ${table} INDEXED BY ${index.name} WHERE collection = ${sqlString(index.collection)} AND ${crossesArraySql(index.fields)}`;
  const equalities = index.fields.slice(0, pinned).map((field) => ` AND ${valueSql(field)} IS ?`);
  return `${from} = 0${equalities.join('')} UNION ALL ${from} = 1`;
}

/**
 * SELECT of the JSON of the documents whose first `pinned` indexed fields hold the bound values
 * and where no indexed path meets an array, ordered by the `ordered` fields after those
 * (descending for `direction` -1): the index holds them in that order, so SQLite walks it and
 * sorts nothing. Only the JSON: a second column would cost better-sqlite3 an object per row.
 */
export function orderedLookupSql(table: string, index: LookupIndex, pinned: number, ordered: number, direction: 1 | -1): string {
  const equalities = index.fields.slice(0, pinned).map((field) => ` AND ${valueSql(field)} IS ?`);
  const order = index.fields.slice(pinned, pinned + ordered).map((field) => `${valueSql(field)}${direction === -1 ? ' DESC' : ''}`);
  return `SELECT json FROM ${table} INDEXED BY ${index.name} WHERE collection = ${sqlString(index.collection)} AND ${crossesArraySql(index.fields)} = 0${equalities.join('')} ORDER BY ${order.join(', ')}`;
}

/** SELECT of whether a document of the index's collection has an array on an indexed path (the index cannot order those). */
export function anyArrayOnIndexSql(table: string, index: LookupIndex): string {
  return `SELECT EXISTS (SELECT 1 FROM ${table} INDEXED BY ${index.name} WHERE collection = ${sqlString(index.collection)} AND ${crossesArraySql(index.fields)} = 1)`;
}

/** A partial index: over the rows of the index's collection only. */
function createIndexSql(kind: 'INDEX' | 'UNIQUE INDEX', name: string, table: string, index: JsonIndex, columns: string[]): string {
  if (index.fields.length === 0) throw new Error('an index needs at least one key');
  return `CREATE ${kind} IF NOT EXISTS ${name} ON ${table} (${columns.join(', ')}) WHERE collection = ${sqlString(index.collection)}`;
}

/** The name encodes `[collection, fields]` in hex: index names are case-insensitive. */
function lookupIndexName(table: string, index: JsonIndex): string {
  return `${lookupPrefix(table)}${Buffer.from(JSON.stringify([index.collection, index.fields]), 'utf8').toString('hex')}`;
}

function lookupPrefix(table: string): string {
  return `${table}_lookup_`;
}

function valueSql(field: string): string {
  return `json_extract(json, ${sqlString(jsonPath(field.split('.')))})`;
}

/** 1 when one of the fields, or an object on the way to it, is an array; else 0 (never NULL). */
function crossesArraySql(fields: string[]): string {
  const prefixes = new Set(fields.flatMap((field) => field.split('.').map((_, i, segments) => jsonPath(segments.slice(0, i + 1)))));
  return `(${[...prefixes].map((path) => `json_type(json, ${sqlString(path)}) IS 'array'`).join(' OR ')})`;
}

/** `['a', 'b']` -> `$."a"."b"` (quoted, so keys with spaces or dashes work). */
function jsonPath(segments: string[]): string {
  if (segments.some((segment) => segment === '' || segment.includes('"'))) throw new Error(`unsupported index key: ${segments.join('.')}`);
  return `$.${segments.map((segment) => `"${segment}"`).join('.')}`;
}

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
