/** Past the basic multilingual plane's lower part, UTF-16 order (JavaScript's) and UTF-8 order (SQLite's) differ. */
const SURROGATE_OR_ABOVE = /[\uD800-\uFFFF]/;

/** Two ids in the order SQLite's ORDER BY id (BINARY: UTF-8 bytes) gives, as a scan of the collection reads them. */
export function compareIds(a: string, b: string): number {
  if (SURROGATE_OR_ABOVE.test(a) || SURROGATE_OR_ABOVE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `items` sorted in place by their ids in SQLite's order (compareIds), by a plain comparison when no id needs more. */
export function sortByIds<T>(items: T[], idOf: (item: T) => string): T[] {
  const plain = items.every((item) => !SURROGATE_OR_ABOVE.test(idOf(item)));
  return items.sort(plain ? (a, b) => (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0) : (a, b) => compareIds(idOf(a), idOf(b)));
}
