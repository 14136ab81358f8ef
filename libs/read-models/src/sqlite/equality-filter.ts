import type { Document, Filter } from '../read-model-store.port';

/** A value a filter may pin a field to without an operator: compared by ===, as MongoDB compares them. */
type Scalar = string | number | boolean | null;

/**
 * A test for filters that only pin fields to scalars (`{org_id: 'o', deleted_at: null}`), the
 * filters the projections and most reads use, without compiling a mingo query (building one costs
 * more than parsing the document). MongoDB's rules hold: `null` matches a missing field too, and a
 * scalar matches an array holding it. Undefined when the filter has anything else (operators,
 * objects, arrays) or a path crosses an array: then mingo decides.
 */
export function equalityTest(filter: Filter): ((doc: Document) => boolean | undefined) | undefined {
  const pins: [string[], Scalar][] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$') || !isScalar(value)) return undefined;
    pins.push([key.split('.'), value]);
  }
  return (doc) => {
    for (const [path, expected] of pins) {
      const found = valueAt(doc, path);
      if (found === CROSSES_ARRAY) return undefined;
      if (!matches(found, expected)) return false;
    }
    return true;
  };
}

const CROSSES_ARRAY = Symbol('crosses an array');

/** The value at `path`; undefined when missing; CROSSES_ARRAY when an array is on the way (MongoDB would look inside it). */
function valueAt(doc: Document, path: string[]): unknown {
  let current: unknown = doc;
  for (const segment of path) {
    if (Array.isArray(current)) return CROSSES_ARRAY;
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function matches(found: unknown, expected: Scalar): boolean {
  if (expected === null) return found === null || found === undefined || (Array.isArray(found) && found.includes(null));
  return found === expected || (Array.isArray(found) && found.includes(expected));
}

function isScalar(value: unknown): value is Scalar {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && !Number.isNaN(value));
}
