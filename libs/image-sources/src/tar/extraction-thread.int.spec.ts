import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { gzip, tarOf, zstd, type TarEntry } from '../../../../test/support/tar-archives';
import { extractInThread } from './extraction-thread';
import { ArchiveTooLargeError, UnsafeArchiveError } from './unsafe-archive-error';

/**
 * The safe extractor on a thread of its own, fed an archive as a stream (an upload as the api
 * receives it): the same files, the same refusals with their kind, and nothing written once the
 * promise has settled.
 */
describe('extracting an archive stream on a thread of its own', () => {
  let work: string;
  let root: string;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'arbor-extract-thread-'));
    root = join(work, 'rootfs');
    mkdirSync(root);
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  /** The archive in pieces, as a socket delivers it. */
  const pieces = (archive: Buffer, size = 16384) => Readable.from(Array.from({ length: Math.ceil(archive.length / size) }, (_, n) => archive.subarray(n * size, (n + 1) * size)));
  const limits = { mode: 'rootfs' as const, maxBytes: 1 << 30, maxEntries: 100_000 };
  const files = (count: number): TarEntry[] => Array.from({ length: count }, (_, n) => ({ name: `usr/lib/f${n}`, content: Buffer.alloc(20_000 + n, n % 251), mode: 0o644 }));

  it.each([
    ['plain', (tar: Buffer) => tar],
    ['gzip', gzip],
    ['zstd', zstd],
  ])('unpacks a %s archive as it streams in, as the extractor does on the caller\'s thread', async (_, compress) => {
    const archive = compress(await tarOf([{ name: 'etc/hostname', content: 'threaded\n' }, { name: 'bin/sh', type: 'symlink', linkname: 'busybox' }, ...files(200)]));
    const report = await extractInThread(pieces(archive), root, limits);
    expect(report).toEqual({ entries: 202, bytes: 9 + 200 * 20_000 + (199 * 200) / 2, skipped_devices: 0, skipped_xattrs: 0 });
    expect(readFileSync(join(root, 'etc/hostname'), 'utf8')).toBe('threaded\n');
    expect(statSync(join(root, 'usr/lib/f199')).size).toBe(20_199);
    expect(readdirSync(join(root, 'usr/lib'))).toHaveLength(200);
  });

  it('takes a chunk larger than the ring between the threads, a ringful at a time', async () => {
    const archive = await tarOf(files(600)); // ~12 MiB in one piece
    expect(await extractInThread(Readable.from([archive]), root, limits)).toMatchObject({ entries: 600 });
    expect(statSync(join(root, 'usr/lib/f599')).size).toBe(20_599);
  });

  it('keeps the kind of a refusal: an entry out of the root, a cap exceeded; nothing lands outside', async () => {
    await expect(extractInThread(pieces(await tarOf([{ name: '../escaped', content: 'x' }])), root, limits)).rejects.toThrow(new UnsafeArchiveError("entry '../escaped' points outside the root filesystem"));
    expect(existsSync(join(work, 'escaped'))).toBe(false);
    await expect(extractInThread(pieces(await tarOf(files(3))), root, { ...limits, maxEntries: 2 })).rejects.toBeInstanceOf(ArchiveTooLargeError);
    await expect(extractInThread(pieces(Buffer.alloc(4096, 7)), root, limits)).rejects.toBeInstanceOf(UnsafeArchiveError);
  });

  it('extracts each archive as its own, one after a refused one that kept arriving and two at once', async () => {
    // The refusal comes at the first entry, while much of the archive is still on its way to the thread.
    const refused = await tarOf([{ name: '../escaped', content: 'x' }, ...files(300)]);
    await expect(extractInThread(pieces(refused), root, limits)).rejects.toBeInstanceOf(UnsafeArchiveError);
    rmSync(root, { recursive: true, force: true });
    const [first, second] = [join(work, 'first'), join(work, 'second')];
    mkdirSync(first);
    mkdirSync(second);

    const reports = await Promise.all([
      extractInThread(pieces(await tarOf([{ name: 'etc/hostname', content: 'first\n' }, ...files(50)])), first, limits),
      extractInThread(pieces(gzip(await tarOf([{ name: 'etc/hostname', content: 'second\n' }]))), second, limits),
    ]);
    const after = await extractInThread(pieces(await tarOf([{ name: 'etc/hostname', content: 'after\n' }])), first, limits);

    expect(reports.map((report) => report.entries)).toEqual([51, 1]);
    expect(after.entries).toBe(1);
    expect(readFileSync(join(first, 'etc/hostname'), 'utf8')).toBe('after\n');
    expect(readFileSync(join(second, 'etc/hostname'), 'utf8')).toBe('second\n');
    expect(readdirSync(join(first, 'usr/lib'))).toHaveLength(50);
    expect(existsSync(join(work, 'escaped'))).toBe(false);
  });

  it('stops with the input\'s own error, and writes nothing once it has settled', async () => {
    const archive = await tarOf(files(400));
    const input = new PassThrough();
    const extraction = extractInThread(input, root, limits);
    input.write(archive.subarray(0, archive.length / 2));
    setTimeout(() => input.destroy(new Error('the upload was cut off')), 50);
    await expect(extraction).rejects.toThrow('the upload was cut off');
    const written = readdirSync(join(root, 'usr/lib')).length;
    expect(written).toBeLessThan(400);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(readdirSync(join(root, 'usr/lib'))).toHaveLength(written);
  });

  it('reads its input only as fast as the thread writes (at most a few MiB ahead)', async () => {
    const archive = await tarOf(files(1000)); // ~20 MiB
    let read = 0;
    let mostAhead = 0;
    let extracted = false;
    const input = new Readable({
      read() {
        if (read >= archive.length) return void this.push(null);
        const piece = archive.subarray(read, read + 65536);
        read += piece.length;
        const written = readdirSync(join(root, 'usr/lib')).reduce((sum, name) => sum + statSync(join(root, 'usr/lib', name)).size, 0);
        if (!extracted) mostAhead = Math.max(mostAhead, read - written);
        this.push(piece);
      },
    });
    mkdirSync(join(root, 'usr/lib'), { recursive: true });
    await extractInThread(input, root, limits);
    extracted = true;
    expect(readdirSync(join(root, 'usr/lib'))).toHaveLength(1000);
    expect(mostAhead).toBeLessThan(12 << 20);
  });
});
