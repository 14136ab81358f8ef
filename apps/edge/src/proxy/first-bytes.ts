import type { Duplex } from 'node:stream';
import { connectionDeadlines } from './deadlines';

export interface FirstBytes<T> {
  /** What `decide` made of the bytes, or undefined: the client went, stayed silent, or was too slow. */
  decision: T | undefined;
  /** Every byte read so far: they go first to wherever the connection is routed. */
  bytes: Buffer;
}

export interface FirstBytesOptions {
  /** How long the whole decision may take (a quarter of a second more at most: connectionDeadlines). */
  timeoutMs: number;
  /** How long a client that has sent nothing at all is waited for (a protocol where the server speaks first). */
  silentMs?: number;
}

/**
 * Reads a connection's first bytes until `decide` can route it (returns something), then leaves
 * the stream paused with nothing read past those bytes' chunk and calls `done` once: the proxy
 * sends them on first and pipes the rest. `decide` bounds what it takes (it decides "too large"
 * itself). A callback, not a promise: `done` runs in the turn that read the deciding chunk.
 */
export function readFirstBytes<T>(stream: Duplex, decide: (bytes: Buffer) => T | undefined, options: FirstBytesOptions, done: (first: FirstBytes<T>) => void): void {
  let read: Buffer | null = null;
  let settled = false;
  const finish = (decision: T | undefined) => {
    if (settled) return;
    settled = true;
    connectionDeadlines.cancel(deadline);
    clearTimeout(silent);
    stream.off('data', onData);
    stream.off('end', onGone);
    stream.off('close', onGone);
    stream.off('error', onGone);
    stream.pause();
    done({ decision, bytes: read ?? Buffer.alloc(0) });
  };
  const onData = (chunk: Buffer) => {
    clearTimeout(silent);
    read = read === null ? chunk : Buffer.concat([read, chunk]);
    const decision = decide(read);
    if (decision !== undefined) finish(decision);
  };
  const onGone = () => finish(undefined);
  const deadline = connectionDeadlines.add(options.timeoutMs, () => finish(undefined));
  const silent = options.silentMs === undefined ? undefined : setTimeout(() => read === null && finish(undefined), options.silentMs);
  // `on`, not `once` (each once wraps its listener): finish runs once and removes them all.
  stream.on('data', onData);
  stream.on('end', onGone);
  stream.on('close', onGone);
  stream.on('error', onGone);
  stream.resume();
}

/** readFirstBytes as a promise, where a connection's path waits on more than its first bytes anyway (a TLS handshake). */
export function firstBytes<T>(stream: Duplex, decide: (bytes: Buffer) => T | undefined, options: FirstBytesOptions): Promise<FirstBytes<T>> {
  return new Promise((resolve) => readFirstBytes(stream, decide, options, resolve));
}
