/** Past the basic multilingual plane's lower part, UTF-16 order (JavaScript's) and UTF-8 order (SQLite's) differ. */
const SURROGATE_OR_ABOVE = /[\uD800-\uFFFF]/;

/** Whether `<` puts this id where SQLite's order of text puts it (it holds no character where the two orders differ). */
export function ordersPlainly(id: string): boolean {
  return !SURROGATE_OR_ABOVE.test(id);
}

/** Two ids in the order SQLite's ORDER BY id (BINARY: UTF-8 bytes) gives, as a scan of the collection reads them. */
export function compareIds(a: string, b: string): number {
  if (!ordersPlainly(a) || !ordersPlainly(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}
