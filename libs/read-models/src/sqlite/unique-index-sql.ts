import { createHash } from 'node:crypto';
import type { Sort } from '../read-model-store.port';

/**
 * DDL for a unique index over JSON fields of one collection (a partial expression index), so that
 * SQLite enforces `ensureIndex(..., { unique: true })` as MongoDB does. One difference remains:
 * documents that lack an indexed field never collide (SQLite NULLs are distinct), where MongoDB
 * treats a missing field as null.
 */
export function uniqueIndexSql(table: string, collection: string, keys: Sort): string {
  const fields = Object.keys(keys);
  if (fields.length === 0) throw new Error('an index needs at least one key');
  const name = `${table}_unique_${createHash('sha256').update(JSON.stringify([collection, fields])).digest('hex').slice(0, 16)}`;
  const columns = fields.map((field) => `json_extract(json, ${sqlString(jsonPath(field))})`);
  return `CREATE UNIQUE INDEX IF NOT EXISTS ${name} ON ${table} (${columns.join(', ')}) WHERE collection = ${sqlString(collection)}`;
}

/** `a.b` -> `$."a"."b"` (quoted, so keys with spaces or dashes work). */
function jsonPath(field: string): string {
  const segments = field.split('.');
  if (segments.some((segment) => segment === '' || segment.includes('"'))) throw new Error(`unsupported index key: ${field}`);
  return `$.${segments.map((segment) => `"${segment}"`).join('.')}`;
}

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
