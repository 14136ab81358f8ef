import type { Document, Update } from '../read-model-store.port';

type Operator = '$set' | '$unset' | '$inc';
const PLAIN_OPERATORS = new Set<string>(['$set', '$unset', '$inc']);

/**
 * `$set`, `$unset` and `$inc` on paths through plain objects, applied directly: the updates the
 * projections write, without compiling a mingo modifier per call (which costs more than the
 * write). False, with `doc` untouched, for anything else — another operator, a path through an
 * array or a scalar, a number-like segment, `$inc` of a non-number, two paths where one contains
 * the other — which mingo then applies with MongoDB's rules and errors.
 */
export function applyPlainUpdate(doc: Document, update: Update): boolean {
  const changes: [Operator, string[], unknown][] = [];
  const paths: string[] = [];
  for (const [operator, fields] of Object.entries(update)) {
    if (!PLAIN_OPERATORS.has(operator) || !isPlainObject(fields)) return false;
    for (const [path, value] of Object.entries(fields)) {
      const segments = path.split('.');
      if (segments.some((segment) => segment === '' || segment.startsWith('$') || /^\d+$/.test(segment)) || segments[0] === '_id') return false;
      if (operator === '$inc' && typeof value !== 'number') return false;
      changes.push([operator as Operator, segments, value]);
      paths.push(path);
    }
  }
  if (overlapping(paths) || !changes.every(([operator, segments]) => reachable(doc, segments, operator))) return false;
  for (const [operator, segments, value] of changes) {
    const field = segments[segments.length - 1];
    if (operator === '$unset') {
      const parent = parentOf(doc, segments, false);
      if (parent) delete parent[field];
      continue;
    }
    const parent = parentOf(doc, segments, true)!;
    parent[field] = operator === '$inc' ? ((parent[field] as number | undefined) ?? 0) + (value as number) : copyOf(value);
  }
  return true;
}

/** Whether every object on the way to the field is a plain object (or missing), and `$inc` finds a number or nothing. */
function reachable(doc: Document, segments: string[], operator: Operator): boolean {
  let current: unknown = doc;
  for (const segment of segments.slice(0, -1)) {
    current = (current as Record<string, unknown>)[segment];
    if (current === undefined) return true;
    if (!isPlainObject(current)) return false;
  }
  const target = (current as Record<string, unknown>)[segments[segments.length - 1]];
  return operator !== '$inc' || target === undefined || typeof target === 'number';
}

/** The object holding the field, made on the way when `create` (absent when not and a step is missing). */
function parentOf(doc: Document, segments: string[], create: boolean): Record<string, unknown> | undefined {
  let current = doc as Record<string, unknown>;
  for (const segment of segments.slice(0, -1)) {
    if (current[segment] === undefined) {
      if (!create) return undefined;
      current[segment] = {};
    }
    current = current[segment] as Record<string, unknown>;
  }
  return current;
}

/** Two paths where one is the other or holds it (`a` and `a.b`): MongoDB refuses those, so mingo answers. */
function overlapping(paths: string[]): boolean {
  const sorted = [...paths].sort();
  return sorted.some((path, i) => i > 0 && (path === sorted[i - 1] || path.startsWith(`${sorted[i - 1]}.`)));
}

/** The document keeps its own copy of an object it is given, as a stored document would. */
function copyOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
