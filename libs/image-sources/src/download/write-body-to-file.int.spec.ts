import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveTooLargeError } from '../tar/unsafe-archive-error';
import { writeBodyToFile } from './write-body-to-file';

/** A body as a download delivers it: chunks one after another, each after `pauseMs`. */
async function* chunks(parts: Buffer[], pauseMs = 0): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    yield part;
  }
}

describe('writing a downloaded body to a file', () => {
  let work: string;
  beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'arbor-body-'))));
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  const parts = Array.from({ length: 40 }, (_, n) => Buffer.alloc(256 * 1024, n)); // 10 MiB, past the write queue's bound
  const whole = Buffer.concat(parts);
  const digest = `sha256:${createHash('sha256').update(whole).digest('hex')}`;

  it('writes every byte in order, and says how many and their digest', async () => {
    const seen: number[] = [];
    const file = join(work, 'layer');
    expect(await writeBodyToFile(chunks(parts), file, { maxBytes: whole.length, digest, what: 'layer', onBytes: (bytes) => seen.push(bytes) })).toEqual({ bytes: whole.length, digest });
    expect(readFileSync(file).equals(whole)).toBe(true);
    expect(seen.at(-1)).toBe(whole.length);
  });

  it('refuses bytes that do not hash to the digest, and a body over the cap at the cap', async () => {
    const other = `sha256:${'0'.repeat(64)}`;
    await expect(writeBodyToFile(chunks(parts), join(work, 'a'), { maxBytes: whole.length, digest: other, what: 'layer x' })).rejects.toThrow(`layer x: the content's digest is ${digest}, not ${other}`);
    let read = 0;
    const counted = (async function* () {
      for await (const chunk of chunks(parts)) yield ((read += chunk.length), chunk);
    })();
    await expect(writeBodyToFile(counted, join(work, 'b'), { maxBytes: 1 << 20, what: 'layer y' })).rejects.toThrow(new ArchiveTooLargeError('layer y is larger than the limit of 1 MiB'));
    expect(read).toBeLessThanOrEqual((1 << 20) + 256 * 1024);
  });

  it('gives up on a body that stops sending, and passes on the body\'s own error', async () => {
    const stalling = (async function* () {
      yield parts[0];
      await new Promise((resolve) => setTimeout(resolve, 10_000).unref()); // never comes in time
      yield parts[1];
    })();
    await expect(writeBodyToFile(stalling, join(work, 'c'), { maxBytes: whole.length, idleTimeoutMs: 200, what: 'layer z' })).rejects.toThrow('layer z: no data for 0 s, the download stalled');
    const broken = (async function* () {
      yield parts[0];
      throw new Error('connection reset');
    })();
    await expect(writeBodyToFile(broken, join(work, 'd'), { maxBytes: whole.length, what: 'layer w' })).rejects.toThrow('connection reset');
  });

  it('keeps waiting for a slow body whose chunks keep coming within the idle time', async () => {
    const slow = parts.slice(0, 6);
    await expect(writeBodyToFile(chunks(slow, 80), join(work, 'e'), { maxBytes: whole.length, idleTimeoutMs: 200, what: 'layer' })).resolves.toMatchObject({ bytes: 6 * 256 * 1024 });
  });
});
