/**
 * How deep a JSON body may nest. The deepest body of the contract is three levels
 * (`{"vm_config":{"labels":{…}}}`); a few thousand levels would overflow the stack of the
 * validation that walks the parsed body (class-transformer recurses once per level).
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The deepest nesting of objects and arrays in a JSON text, scanned over its bytes before it is
 * parsed (brackets inside strings do not count). It stops as soon as `limit` is passed and
 * returns `limit + 1`, so a body of millions of brackets costs no more than its first few.
 */
export function jsonDepth(body: Uint8Array, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return deepest;
}

/**
 * body-parser's `verify` hook for JSON bodies: refuses one nested deeper than MAX_JSON_DEPTH
 * before it is parsed, as a body that does not parse (400 `Failed to parse the request body as
 * JSON: …`, body-parser's own error type for that).
 */
export function refuseDeepJson(_request: unknown, _response: unknown, body: Buffer): void {
  if (jsonDepth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw Object.assign(new Error(`nested deeper than ${MAX_JSON_DEPTH} levels`), { status: 400, type: 'entity.parse.failed' });
  }
}
