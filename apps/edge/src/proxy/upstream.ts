import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long connecting to a VM's port may take. */
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

/** Connects to `port` of the VM at `address` (IPv6 as the contract has it, or IPv4). */
export function connectUpstream(address: string, port: number, what: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, allowHalfOpen: true, noDelay: true });
    const fail = (error: UpstreamError) => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(UPSTREAM_CONNECT_TIMEOUT_MS, () => fail(new UpstreamError(504, `${what} did not answer on port ${port} within ${UPSTREAM_CONNECT_TIMEOUT_MS / 1000} s`)));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ECONNREFUSED' ? `nothing listens on port ${port} of ${what} (services must listen on :: to be reached)` : `${what} cannot be reached on port ${port}: ${error.code ?? error.message}`;
      fail(new UpstreamError(502, reason));
    });
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}

/**
 * Joins the client and the VM's port: the bytes already read from the client first, then both
 * directions piped with backpressure; an end is passed on (half-close), and an error or a close
 * of either side ends both. TCP keepalive finds peers that went away without a word.
 */
export function splice(client: Duplex, upstream: Socket, firstBytes: Buffer): void {
  upstream.setKeepAlive(true, 60_000);
  if (firstBytes.length) upstream.write(firstBytes);
  client.pipe(upstream);
  upstream.pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.once('error', end);
  upstream.once('error', end);
  client.once('close', end);
  upstream.once('close', end);
}
