/** A `WWW-Authenticate` challenge: its scheme (lowercase) and its parameters (`realm`, `service`, `scope`). */
export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * Parses the first challenge of a `WWW-Authenticate` header (RFC 7235): `Bearer
 * realm="https://auth.example/token",service="registry.example"`. Quoted values may hold commas
 * and escaped quotes.
 */
export function parseChallenge(header: string): Challenge | null {
  const match = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s*(.*)$/s.exec(header);
  if (!match) return null;
  const params: Record<string, string> = {};
  const pattern = /\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/gy;
  const rest = match[2];
  let found: RegExpExecArray | null;
  while (pattern.lastIndex < rest.length && (found = pattern.exec(rest)) !== null) {
    params[found[1].toLowerCase()] = found[2] !== undefined ? found[2].replace(/\\(.)/g, '$1') : found[3];
  }
  return { scheme: match[1].toLowerCase(), params };
}
