import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { ArchiveTooLargeError } from '../tar/unsafe-archive-error';

export interface BodyToFileOptions {
  /** More bytes than this fail the download (the file is left for the caller to remove). */
  maxBytes: number;
  /** `sha256:<hex>`: the bytes must hash to it, or the download fails. */
  digest?: string;
  /** Called with the bytes written so far, after every chunk. */
  onBytes?: (bytes: number) => void;
  /** No byte for this long aborts the download (a stalled server). */
  idleTimeoutMs?: number;
  /** What the download is, for messages ("layer sha256:…", "s3://bucket/key"). */
  what: string;
}

/**
 * Streams a body (an HTTP response's, an S3 object's) into a file, counting and hashing as it
 * goes: a body over the cap is cut off there, a stalled one aborted, and one whose bytes do not
 * hash to the expected digest refused. Nothing is held in memory beyond a chunk.
 */
export async function writeBodyToFile(body: AsyncIterable<Uint8Array>, file: string, options: BodyToFileOptions): Promise<{ bytes: number; digest: string }> {
  const hash: Hash = createHash('sha256');
  const expected = options.digest ? expectedSha256(options.digest, options.what) : null;
  const handle = await open(file, 'w', 0o600);
  let bytes = 0;
  const iterator = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await withIdleTimeout(iterator.next(), options.idleTimeoutMs ?? 120_000, options.what);
      if (next.done) break;
      const chunk = next.value;
      bytes += chunk.length;
      if (bytes > options.maxBytes) throw new ArchiveTooLargeError(`${options.what} is larger than the limit of ${Math.round(options.maxBytes / 1048576)} MiB`);
      hash.update(chunk);
      for (let offset = 0; offset < chunk.length; ) offset += (await handle.write(chunk, offset)).bytesWritten;
      options.onBytes?.(bytes);
    }
    await handle.sync();
  } catch (error) {
    await iterator.return?.().catch(() => {});
    throw error;
  } finally {
    await handle.close();
  }
  const digest = `sha256:${hash.digest('hex')}`;
  if (expected && digest !== expected) throw new Error(`${options.what}: the content's digest is ${digest}, not ${expected} (corrupt or tampered with)`);
  return { bytes, digest };
}

function expectedSha256(digest: string, what: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${what}: digest ${digest} cannot be verified (only sha256 digests are)`);
  return digest;
}

async function withIdleTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no data for ${Math.round(ms / 1000)} s, the download stalled`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
