import { find as findWithMingo } from 'mingo';
import type { Document, Sort } from '../read-model-store.port';

const MINGO_OPTIONS = { scriptEnabled: false };

/**
 * `docs` in the order of `sort`, as mingo (MongoDB) orders them: keys in turn, ties keeping their
 * order. When every document holds a string under every key (or a number: the same type per key,
 * no NaN or -0), which is what the read models sort by (times, ids, names), a plain comparison
 * sorts them, as mingo itself does for such values, without its grouping per key; anything else
 * (null, missing, arrays, mixed types) is left to mingo.
 */
export function sortDocuments<T extends Document>(docs: T[], sort: Sort): T[] {
  const keys = Object.entries(sort).map(([path, direction]) => ({ path: path.split('.'), direction }));
  const columns = keys.map(({ path }) => docs.map((doc) => valueAt(doc, path)));
  if (!columns.every(isPlainlyComparable)) return findWithMingo<T>(docs, {}, {}, MINGO_OPTIONS).sort(sort).all();
  const order = docs.map((_, index) => index);
  order.sort((a, b) => {
    for (let k = 0; k < keys.length; k++) {
      const [x, y] = [columns[k][a] as string | number, columns[k][b] as string | number];
      if (x !== y) return (x < y ? -1 : 1) * keys[k].direction;
    }
    return a - b;
  });
  return order.map((index) => docs[index]);
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
