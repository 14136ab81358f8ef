import type { Duplex } from 'node:stream';

export interface FirstBytes<T> {
  /** What `decide` made of the bytes, or undefined: the client went, stayed silent, or was too slow. */
  decision: T | undefined;
  /** Every byte read so far: they go first to wherever the connection is routed. */
  bytes: Buffer;
}

export interface FirstBytesOptions {
  /** How long the whole decision may take. */
  timeoutMs: number;
  /** How long a client that has sent nothing at all is waited for (a protocol where the server speaks first). */
  silentMs?: number;
}

/**
 * Reads a connection's first bytes until `decide` can route it (returns something), then leaves
 * the stream paused with nothing read past those bytes' chunk: the proxy sends them on first
 * and pipes the rest. `decide` bounds what it takes (it decides "too large" itself).
 */
export function readFirstBytes<T>(stream: Duplex, decide: (bytes: Buffer) => T | undefined, options: FirstBytesOptions): Promise<FirstBytes<T>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (decision: T | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(silent);
      stream.off('data', onData);
      stream.off('end', onGone);
      stream.off('close', onGone);
      stream.off('error', onGone);
      stream.pause();
      resolve({ decision, bytes: Buffer.concat(chunks) });
    };
    const onData = (chunk: Buffer) => {
      clearTimeout(silent);
      chunks.push(chunk);
      const decision = decide(Buffer.concat(chunks));
      if (decision !== undefined) finish(decision);
    };
    const onGone = () => finish(undefined);
    const timer = setTimeout(() => finish(undefined), options.timeoutMs);
    const silent = options.silentMs === undefined ? undefined : setTimeout(() => chunks.length === 0 && finish(undefined), options.silentMs);
    stream.on('data', onData);
    stream.once('end', onGone);
    stream.once('close', onGone);
    stream.once('error', onGone);
    stream.resume();
  });
}
