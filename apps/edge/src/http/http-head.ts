/** What the first bytes of a connection say about HTTP. */
export type HttpHead =
  | { kind: 'incomplete' }
  | { kind: 'not_http' }
  | { kind: 'bad_request'; reason: string }
  /** `host`: the host the request names (absolute-form target first, then the Host header), lowercase, port included. */
  | { kind: 'head'; method: string; host: string | null };

/** A request head larger than this is refused (431), as HTTP servers commonly do. */
export const MAX_HTTP_HEAD_BYTES = 16 * 1024;

const SPACE = 0x20;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
const HOST_HEADER = /^host[ \t]*:/i;
const ABSOLUTE_TARGET = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]+@)?([^/?#]+)/i;

/**
 * Reads the head of an HTTP/1.x request from the bytes received so far, to route the connection
 * by its Host. It decides "not HTTP" as early as it can (an SSH client's `SSH-2.0-…` after three
 * bytes), so other protocols are not held up. It runs on every fresh connection before the edge
 * connects to the VM: one pass over the lines, a regular expression only where a line may be the
 * Host.
 */
export function parseHttpHead(bytes: Buffer): HttpHead {
  const methodEnd = Math.min(bytes.length, 17);
  for (let i = 0; i < methodEnd; i++) {
    const byte = bytes[i];
    if (byte === SPACE && i > 0) break;
    if (byte < UPPER_A || byte > UPPER_Z || i === 16) return { kind: 'not_http' };
  }
  const end = bytes.indexOf('\r\n\r\n');
  const bareEnd = end < 0 ? bytes.indexOf('\n\n') : -1;
  if (end < 0 && bareEnd < 0) {
    if (bytes.length > MAX_HTTP_HEAD_BYTES) return { kind: 'bad_request', reason: `a request head larger than ${MAX_HTTP_HEAD_BYTES} bytes` };
    const firstLine = bytes.indexOf('\n');
    if (firstLine >= 0 && !isRequestLine(bytes.toString('latin1', 0, firstLine))) return { kind: 'not_http' };
    return { kind: 'incomplete' };
  }
  const text = bytes.toString('latin1', 0, end >= 0 ? end : bareEnd);
  // Lines as text.split(/\r?\n/) has them: a \r before each \n dropped, the last line as it is.
  let lineEnd = text.indexOf('\n');
  const requestLine = lineEnd < 0 ? text : text.slice(0, text.charCodeAt(lineEnd - 1) === 0x0d ? lineEnd - 1 : lineEnd);
  if (!isRequestLine(requestLine)) return { kind: 'not_http' };
  const targetStart = requestLine.indexOf(' ') + 1;
  const method = requestLine.slice(0, targetStart - 1);
  const target = requestLine.slice(targetStart, requestLine.indexOf(' ', targetStart));
  let header: string | null = null;
  while (lineEnd >= 0) {
    const lineStart = lineEnd + 1;
    lineEnd = text.indexOf('\n', lineStart);
    const first = text.charCodeAt(lineStart);
    if (first !== 0x68 && first !== 0x48) continue; // h, H: only a Host header matters
    const line = lineEnd < 0 ? text.slice(lineStart) : text.slice(lineStart, text.charCodeAt(lineEnd - 1) === 0x0d ? lineEnd - 1 : lineEnd);
    if (!HOST_HEADER.test(line)) continue;
    if (header !== null) return { kind: 'bad_request', reason: 'more than one Host header' };
    header = line.slice(line.indexOf(':') + 1).trim();
  }
  const absolute = target.charCodeAt(0) === 0x2f ? null : ABSOLUTE_TARGET.exec(target); // an origin-form target ("/…") names no host
  const host = (absolute ? absolute[2] : header)?.toLowerCase() ?? null;
  return { kind: 'head', method, host: host || null };
}

/** The request head once the bytes hold all of it (or show they are not one): what an entrance's readFirstBytes waits for. */
export function decideHttpHead(bytes: Buffer): Exclude<HttpHead, { kind: 'incomplete' }> | undefined {
  const head = parseHttpHead(bytes);
  return head.kind === 'incomplete' ? undefined : head;
}

function isRequestLine(line: string): boolean {
  return /^[A-Z]{1,16} \S+ HTTP\/1\.[01]\r?$/.test(line);
}

/** Splits `host[:port]` (a bracketed IPv6 literal too); port null when absent, NaN when not a port. */
export function splitHostPort(authority: string): { host: string; port: number | null } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(authority)!;
  const host = match[1].replace(/\.$/, '');
  if (match[2] === undefined) return { host, port: null };
  const port = /^[0-9]{1,5}$/.test(match[2]) ? Number(match[2]) : NaN;
  return { host, port: port >= 1 && port <= 65535 ? port : NaN };
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  421: 'Misdirected Request',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The edge's own answer to an HTTP request it cannot route: the status and why, in plain text. */
export function httpRefusal(status: number, reason: string, headers: Record<string, string> = {}): Buffer {
  const body = `${reason}\n`;
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const head = `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nserver: arbor-edge\r\n${extra}\r\n`;
  return Buffer.from(head + body);
}
