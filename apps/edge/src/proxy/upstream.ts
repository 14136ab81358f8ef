import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connectionDeadlines } from './deadlines';

/** How long connecting to a VM's port may take (a quarter of a second more at most: connectionDeadlines). */
export const UPSTREAM_CONNECT_TIMEOUT_MS = 10_000;

/** Why a VM's port could not be reached, in words for the client (with the HTTP status an HTTP client gets). */
export class UpstreamError extends Error {
  constructor(
    readonly status: 502 | 504,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Connects to `port` of the VM at `address` (IPv6 as the contract has it, or IPv4), then calls
 * `done` once: with the connected socket, or with why it could not connect. In callbacks rather
 * than a promise: a fresh connection's path from its first bytes to the VM is the edge's own
 * latency, and every promise there is paid for per connection.
 */
export function connectUpstream(address: string, port: number, what: string, done: (error: UpstreamError | null, socket: Socket) => void): void {
  const socket = connect({ host: address, port, allowHalfOpen: true, noDelay: true });
  let settled = false;
  const settle = (error: UpstreamError | null) => {
    if (settled) return;
    settled = true;
    connectionDeadlines.cancel(deadline);
    socket.off('error', onError);
    socket.off('connect', onConnect);
    if (error) {
      socket.on('error', () => undefined); // destroyed here: nothing more to report
      socket.destroy();
    }
    done(error, socket);
  };
  const onError = (error: NodeJS.ErrnoException) => {
    const reason = error.code === 'ECONNREFUSED' ? `nothing listens on port ${port} of ${what} (services must listen on :: to be reached)` : `${what} cannot be reached on port ${port}: ${error.code ?? error.message}`;
    settle(new UpstreamError(502, reason));
  };
  const onConnect = () => settle(null);
  const deadline = connectionDeadlines.add(UPSTREAM_CONNECT_TIMEOUT_MS, () =>
    settle(new UpstreamError(504, `${what} did not answer on port ${port} within ${UPSTREAM_CONNECT_TIMEOUT_MS / 1000} s`)),
  );
  socket.on('error', onError);
  socket.on('connect', onConnect);
}

/**
 * Joins the client and the VM's port: the bytes already read from the client first, then both
 * directions piped with backpressure; an end is passed on (half-close), and an error or a close
 * of either side ends both. (TCP keepalive, for a VM side gone without a word, is set on the
 * connections that last: OpenConnections.keepAliveLasting.)
 */
export function splice(client: Duplex, upstream: Socket, firstBytes: Buffer): void {
  if (firstBytes.length) upstream.write(firstBytes);
  client.pipe(upstream);
  upstream.pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end);
  upstream.on('error', end);
  client.on('close', end);
  upstream.on('close', end);
}
