import { createHash, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { ArchiveTooLargeError } from '../tar/unsafe-archive-error';

/** How far the file's writes may lag behind the body before it waits for them. */
const WRITE_AHEAD = 4 << 20;

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
 * hash to the expected digest refused. Nothing is held in memory beyond a few chunks (the file's
 * write queue, at most WRITE_AHEAD bytes: the body waits for it).
 *
 * The file is not fsynced: it is a download for the job at hand (a layer, an S3 object), which
 * starts again from nothing after a crash; a flush of 100 MiB stalled every file creation of
 * the extraction beside it behind the journal.
 */
export async function writeBodyToFile(body: AsyncIterable<Uint8Array>, file: string, options: BodyToFileOptions): Promise<{ bytes: number; digest: string }> {
  const hash: Hash = createHash('sha256');
  const expected = options.digest ? expectedSha256(options.digest, options.what) : null;
  const out = createWriteStream(file, { mode: 0o600, highWaterMark: WRITE_AHEAD });
  const written = new Promise<void>((resolve, reject) => out.once('close', resolve).once('error', reject));
  written.catch(() => {}); // awaited below, or the download's own error goes up
  let bytes = 0;
  const iterator = body[Symbol.asyncIterator]();
  // One timer for the whole download, pushed back by every chunk (not one timer and race per chunk).
  const idleMs = options.idleTimeoutMs ?? 120_000;
  let stall!: (error: Error) => void;
  const stalled = new Promise<never>((_, reject) => (stall = reject));
  stalled.catch(() => {});
  const timer = setTimeout(() => stall(new Error(`${options.what}: no data for ${Math.round(idleMs / 1000)} s, the download stalled`)), idleMs);
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), stalled]);
      if (next.done) break;
      timer.refresh();
      const chunk = next.value;
      bytes += chunk.length;
      if (bytes > options.maxBytes) throw new ArchiveTooLargeError(`${options.what} is larger than the limit of ${Math.round(options.maxBytes / 1048576)} MiB`);
      hash.update(chunk);
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), written, stalled]);
      options.onBytes?.(bytes);
    }
    out.end();
    await written;
  } catch (error) {
    // The body is told to stop, not waited for: a stalled one may never answer.
    void iterator.return?.().catch(() => {});
    out.destroy();
    await written.catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const digest = `sha256:${hash.digest('hex')}`;
  if (expected && digest !== expected) throw new Error(`${options.what}: the content's digest is ${digest}, not ${expected} (corrupt or tampered with)`);
  return { bytes, digest };
}

function expectedSha256(digest: string, what: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${what}: digest ${digest} cannot be verified (only sha256 digests are)`);
  return digest;
}
