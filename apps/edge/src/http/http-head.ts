/** What the first bytes of a connection say about HTTP. */
export type HttpHead =
  | { kind: 'incomplete' }
  | { kind: 'not_http' }
  | { kind: 'bad_request'; reason: string }
  /** `host`: the host the request names (absolute-form target first, then the Host header), lowercase, port included. */
  | { kind: 'head'; method: string; host: string | null };

/** A request head larger than this is refused (431), as HTTP servers commonly do. */
export const MAX_HTTP_HEAD_BYTES = 16 * 1024;

const METHOD_CHAR = /^[A-Z]$/;

/**
 * Reads the head of an HTTP/1.x request from the bytes received so far, to route the connection
 * by its Host. It decides "not HTTP" as early as it can (an SSH client's `SSH-2.0-…` after three
 * bytes), so other protocols are not held up.
 */
export function parseHttpHead(bytes: Buffer): HttpHead {
  const start = bytes.subarray(0, 17).toString('latin1');
  for (let i = 0; i < start.length; i++) {
    if (start[i] === ' ' && i > 0) break;
    if (!METHOD_CHAR.test(start[i]) || i === 16) return { kind: 'not_http' };
  }
  const end = bytes.indexOf('\r\n\r\n');
  const bareEnd = end < 0 ? bytes.indexOf('\n\n') : -1;
  if (end < 0 && bareEnd < 0) {
    if (bytes.length > MAX_HTTP_HEAD_BYTES) return { kind: 'bad_request', reason: `a request head larger than ${MAX_HTTP_HEAD_BYTES} bytes` };
    const firstLine = bytes.indexOf('\n');
    if (firstLine >= 0 && !isRequestLine(bytes.subarray(0, firstLine).toString('latin1'))) return { kind: 'not_http' };
    return { kind: 'incomplete' };
  }
  const lines = bytes
    .subarray(0, end >= 0 ? end : bareEnd)
    .toString('latin1')
    .split(/\r?\n/);
  const requestLine = lines[0];
  if (!isRequestLine(requestLine)) return { kind: 'not_http' };
  const [method, target] = requestLine.split(' ');
  const hosts = lines.slice(1).filter((line) => /^host[ \t]*:/i.test(line));
  if (hosts.length > 1) return { kind: 'bad_request', reason: 'more than one Host header' };
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]+@)?([^/?#]+)/i.exec(target);
  const header = hosts.length ? hosts[0].slice(hosts[0].indexOf(':') + 1).trim() : null;
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
