import type { Document, Sort } from '../read-model-store.port';
import { compareIds } from './id-order';
import { mingoQuery } from './mingo-query';

/**
 * `docs` in the order of `sort`, as mingo (MongoDB) orders them: keys in turn, ties keeping their
 * order. When every document holds a string under every key (or a number: the same type per key,
 * no NaN or -0), which is what the read models sort by (times, ids, names), a plain comparison
 * sorts them, as mingo itself does for such values, without its grouping per key; anything else
 * (null, missing, arrays, mixed types) is left to mingo.
 */
export function sortDocuments<T extends Document>(docs: T[], sort: Sort): T[] {
  const compare = plainComparison(docs, sort);
  if (!compare) return mingoQuery<T>({}).find<T>(docs).sort(sort).all();
  const order = docs.map((_, index) => index);
  order.sort((a, b) => compare(a, b) || a - b);
  return order.map((index) => docs[index]);
}

/**
 * Whether `docs` stand exactly in the order sortDocuments gives when handed them in `_id` order
 * (a scan's): each document after the one before by the keys, ties by `_id`, all compared plainly.
 * Documents read in an index's order of the keys usually do, and then need no sorting.
 */
export function inSortOrder(docs: Document[], sort: Sort): boolean {
  const compare = plainComparison(docs, sort);
  if (!compare) return false;
  for (let i = 1; i < docs.length; i++) {
    const order = compare(i - 1, i);
    if (order > 0 || (order === 0 && compareIds(docs[i - 1]._id, docs[i]._id) >= 0)) return false;
  }
  return true;
}

/**
 * Compares two of the documents by their positions, by the sort's keys in turn; undefined when a
 * key's values do not all compare plainly (then only mingo knows the order).
 */
function plainComparison(docs: Document[], sort: Sort): ((a: number, b: number) => number) | undefined {
  const keys = Object.entries(sort).map(([path, direction]) => ({ path: path.split('.'), direction }));
  const columns = keys.map(({ path }) => docs.map((doc) => valueAt(doc, path)));
  if (!columns.every(isPlainlyComparable)) return undefined;
  return (a, b) => {
    for (let k = 0; k < keys.length; k++) {
      const [x, y] = [columns[k][a] as string | number, columns[k][b] as string | number];
      if (x !== y) return (x < y ? -1 : 1) * keys[k].direction;
    }
    return 0;
  };
}

/** All strings, or all numbers that compare plainly (no NaN, no -0). */
function isPlainlyComparable(values: unknown[]): boolean {
  if (values.every((value) => typeof value === 'string')) return true;
  return values.every((value) => typeof value === 'number' && !Number.isNaN(value) && !Object.is(value, -0));
}

/** The value at a dotted path through plain objects; undefined when missing or when an array is on the way. */
function valueAt(doc: Document, path: string[]): unknown {
  let current: unknown = doc;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
