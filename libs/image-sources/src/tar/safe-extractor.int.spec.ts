import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzip, tarOf, zstd, type TarEntry } from '../../../../test/support/tar-archives';
import { extractArchiveFile } from './extract-archive-file';
import { ExtractionBudget } from './safe-extractor';
import { ArchiveTooLargeError, UnsafeArchiveError } from './unsafe-archive-error';
import { Readable } from 'node:stream';
import { openArchive, openArchiveStream } from './open-archive';
import { extractTar } from './safe-extractor';

/**
 * The safe extractor on real files: what a root filesystem archive holds comes out as it was
 * (modes, owners, links), and what a hostile one tries never reaches outside the root.
 */
describe('extracting a root filesystem archive safely', () => {
  let work: string;
  let root: string;
  let outside: string;
  const asRoot = process.getuid?.() === 0;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'arbor-extract-'));
    root = join(work, 'rootfs');
    outside = join(work, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  async function extract(entries: TarEntry[], options: { compress?: (tar: Buffer) => Buffer; maxBytes?: number; maxEntries?: number } = {}) {
    const tar = await tarOf(entries);
    const file = join(work, 'archive');
    writeFileSync(file, options.compress ? options.compress(tar) : tar);
    return extractArchiveFile(file, root, { budget: new ExtractionBudget(options.maxBytes ?? 1 << 30, options.maxEntries ?? 100_000) });
  }

  it('keeps what a root filesystem is: directories, files, modes, setuid bits, owners, symbolic and hard links, FIFOs', async () => {
    const report = await extract([
      { name: './', type: 'directory', mode: 0o755 },
      { name: './bin/', type: 'directory' },
      { name: './bin/busybox', content: 'ELF', mode: 0o4755 },
      { name: './bin/sh', type: 'symlink', linkname: 'busybox' },
      { name: './bin/ls', type: 'link', linkname: './bin/busybox' },
      { name: './tmp/', type: 'directory', mode: 0o1777 },
      { name: './home/ann/notes', content: 'hello', uid: 1000, gid: 1000, mode: 0o600 },
      { name: './run/pipe', type: 'fifo', mode: 0o620 },
      { name: './usr/lib/libc.so', type: 'symlink', linkname: '/lib/libc.so.6' },
    ]);
    expect(report).toMatchObject({ entries: 8, bytes: 8, skipped_devices: 0 });
    expect(readFileSync(join(root, 'bin/busybox'), 'utf8')).toBe('ELF');
    expect(statSync(join(root, 'bin/busybox')).mode & 0o7777).toBe(0o4755);
    expect(readlinkSync(join(root, 'bin/sh'))).toBe('busybox');
    expect(statSync(join(root, 'bin/ls')).ino).toBe(statSync(join(root, 'bin/busybox')).ino);
    expect(statSync(join(root, 'tmp')).mode & 0o7777).toBe(0o1777);
    expect(lstatSync(join(root, 'run/pipe')).isFIFO()).toBe(true);
    // An absolute link target is the image's own business: kept as it is, never followed here.
    expect(readlinkSync(join(root, 'usr/lib/libc.so'))).toBe('/lib/libc.so.6');
    if (asRoot) expect([statSync(join(root, 'home/ann/notes')).uid, statSync(join(root, 'home/ann/notes')).gid]).toEqual([1000, 1000]);
    expect(statSync(join(root, 'home/ann/notes')).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['gzip', gzip],
    ['zstd', zstd],
  ])('reads %s-compressed archives (told by their first bytes)', async (_, compress) => {
    await extract([{ name: 'etc/hostname', content: 'box\n' }], { compress });
    expect(readFileSync(join(root, 'etc/hostname'), 'utf8')).toBe('box\n');
  });

  describe('an archive arriving as a stream (an upload as it is received)', () => {
    /** The archive as a socket delivers it: its first bytes in pieces of `head` bytes, then 16 KiB at a time. */
    const pieces = (archive: Buffer, head: number) => {
      const cuts = [0, ...Array.from({ length: 8 }, (_, n) => (n + 1) * head)];
      for (let at = cuts[cuts.length - 1] + 16384; at < archive.length; at += 16384) cuts.push(at);
      return Readable.from(cuts.map((at, n) => archive.subarray(at, cuts[n + 1] ?? archive.length)).filter((piece) => piece.length > 0));
    };
    const fromStream = async (stream: Readable) => extractTar(await openArchiveStream(stream), root, { mode: 'rootfs', budget: new ExtractionBudget(1 << 30, 1000) });

    it.each([
      ['plain', (tar: Buffer) => tar],
      ['gzip', gzip],
      ['zstd', zstd],
    ])('tells %s by its first bytes, even when they come one at a time', async (_, compress) => {
      const archive = compress(await tarOf([{ name: 'etc/hostname', content: 'streamed\n' }, { name: 'bin/big', content: Buffer.alloc(300_000, 7), mode: 0o755 }]));
      for (const size of [1, 5, 4096]) {
        rmSync(root, { recursive: true, force: true });
        mkdirSync(root);
        expect(await fromStream(pieces(archive, size))).toMatchObject({ entries: 2, bytes: 300_009 });
        expect(readFileSync(join(root, 'etc/hostname'), 'utf8')).toBe('streamed\n');
        expect(statSync(join(root, 'bin/big')).size).toBe(300_000);
      }
    });

    it('refuses what is too short to be a tar, a corrupt stream, and xz; the stream\'s own error passes through', async () => {
      await expect(fromStream(Readable.from([Buffer.from('abc')]))).rejects.toThrow(UnsafeArchiveError);
      const good = gzip(await tarOf([{ name: 'x', content: Buffer.alloc(100_000, 1) }]));
      await expect(fromStream(pieces(good.subarray(0, good.length / 2), 1000))).rejects.toThrow(/gzip stream is corrupt|not a readable tar/);
      await expect(fromStream(Readable.from([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 1, 2])]))).rejects.toThrow(/xz-compressed/);
      const cut = new Readable({ read() {} });
      cut.push(await tarOf([{ name: 'x', content: Buffer.alloc(100_000, 1) }]).then((tar) => tar.subarray(0, 2048)));
      setTimeout(() => cut.destroy(new Error('the upload was cut off')), 20);
      await expect(fromStream(cut)).rejects.toThrow('the upload was cut off');
    });
  });

  it('refuses an entry that climbs out with ../, and writes nothing outside', async () => {
    await expect(extract([{ name: '../outside/evil', content: 'x' }])).rejects.toThrow(new UnsafeArchiveError("entry '../outside/evil' points outside the root filesystem"));
    await expect(extract([{ name: 'a/../../outside/evil', content: 'x' }])).rejects.toThrow(UnsafeArchiveError);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('takes absolute names inside the root (as GNU tar does)', async () => {
    await extract([{ name: `${outside}/abs`, content: 'x' }]);
    expect(existsSync(join(outside, 'abs'))).toBe(false);
    expect(readFileSync(join(root, outside, 'abs'), 'utf8')).toBe('x');
  });

  it('never writes through a symbolic link: a link to a host directory is followed within the root', async () => {
    await extract([
      { name: 'etc', type: 'symlink', linkname: outside },
      { name: 'etc/passwd', content: 'owned' },
      { name: 'up', type: 'symlink', linkname: '../../../..' },
      { name: 'up/escaped', content: 'owned' },
    ]);
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(join(root, outside, 'passwd'), 'utf8')).toBe('owned');
    expect(readFileSync(join(root, 'escaped'), 'utf8')).toBe('owned');
  });

  it('replaces a symbolic link an entry names rather than writing to its target', async () => {
    writeFileSync(join(outside, 'target'), 'host file');
    await extract([
      { name: 'file', type: 'symlink', linkname: join(outside, 'target') },
      { name: 'file', content: 'image file' },
    ]);
    expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('host file');
    expect(readFileSync(join(root, 'file'), 'utf8')).toBe('image file');
  });

  it('refuses hard links to anything outside the root or not yet in it', async () => {
    writeFileSync(join(outside, 'secret'), 'host secret');
    await expect(extract([{ name: 'stolen', type: 'link', linkname: '../outside/secret' }])).rejects.toThrow(UnsafeArchiveError);
    await expect(extract([{ name: 'stolen', type: 'link', linkname: join(outside, 'secret') }])).rejects.toThrow(/which the archive has not made/);
    // Through a symbolic link the archive planted: resolved within the root, where there is nothing.
    await expect(extract([{ name: 'out', type: 'symlink', linkname: outside }, { name: 'stolen', type: 'link', linkname: 'out/secret' }])).rejects.toThrow(/which the archive has not made/);
    expect(existsSync(join(root, 'stolen'))).toBe(false);
  });

  it('leaves device nodes out (a machine has its own /dev)', async () => {
    const report = await extract([
      { name: 'dev/', type: 'directory' },
      { name: 'dev/sda', type: 'block-device', devmajor: 8, devminor: 0 },
      { name: 'dev/mem', type: 'character-device', devmajor: 1, devminor: 1 },
      { name: 'dev/keep', content: '' },
    ]);
    expect(report.skipped_devices).toBe(2);
    expect(readdirSync(join(root, 'dev'))).toEqual(['keep']);
  });

  it('stops at the size and entry caps (tar and gzip bombs)', async () => {
    await expect(extract([{ name: 'big', content: Buffer.alloc(4096) }], { maxBytes: 1024, compress: gzip })).rejects.toThrow(ArchiveTooLargeError);
    await expect(extract([{ name: 'a', content: '' }, { name: 'b', content: '' }, { name: 'c', content: '' }], { maxEntries: 2 })).rejects.toThrow(ArchiveTooLargeError);
  });

  it('counts archives extracted one over another (an image\'s layers) against one budget', async () => {
    const budget = new ExtractionBudget(6000, 100);
    const layer = async (name: string, entries: TarEntry[]) => {
      const file = join(work, name);
      writeFileSync(file, await tarOf(entries));
      return extractArchiveFile(file, root, { mode: 'layer', budget });
    };

    await layer('lower', [{ name: 'a', content: Buffer.alloc(2500) }, { name: 'b', content: Buffer.alloc(2500) }]);
    expect([budget.bytes, budget.entries]).toEqual([5000, 2]);
    await expect(layer('upper', [{ name: 'c', content: Buffer.alloc(2000) }])).rejects.toThrow(new ArchiveTooLargeError('the root filesystem is larger than the limit of 0 MiB'));
  });

  it('refuses what is no archive, and a corrupt compressed stream', async () => {
    const file = join(work, 'junk');
    writeFileSync(file, Buffer.alloc(1024, 7));
    await expect(extractArchiveFile(file, root, { budget: new ExtractionBudget(1 << 20, 100) })).rejects.toThrow(UnsafeArchiveError);
    const good = gzip(await tarOf([{ name: 'x', content: Buffer.alloc(100_000, 1) }]));
    writeFileSync(file, good.subarray(0, good.length / 2));
    await expect(extractArchiveFile(file, root, { budget: new ExtractionBudget(1 << 20, 100) })).rejects.toThrow(/gzip stream is corrupt|not a readable tar/);
    const zst = zstd(await tarOf([{ name: 'x', content: Buffer.alloc(100_000, 1) }]));
    writeFileSync(file, Buffer.concat([zst.subarray(0, 20), Buffer.alloc(200, 9)]));
    await expect(extractArchiveFile(file, root, { budget: new ExtractionBudget(1 << 20, 100) })).rejects.toThrow(/zstd stream is corrupt|not a readable tar/);
  });

  describe('image layers', () => {
    async function layer(entries: TarEntry[]) {
      const file = join(work, `layer-${Math.random()}`);
      writeFileSync(file, await tarOf(entries));
      return extractTar(await openArchive(file), root, { mode: 'layer', budget: new ExtractionBudget(1 << 30, 100_000) });
    }

    it('applies whiteouts and opaque directories to the layers below only', async () => {
      await layer([
        { name: 'etc/motd', content: 'lower' },
        { name: 'etc/keep', content: 'lower' },
        { name: 'var/cache/a', content: 'lower' },
        { name: 'var/cache/b/c', content: 'lower' },
      ]);
      await layer([
        { name: 'etc/.wh.motd' },
        // The opaque marker after an entry of its own layer: that entry stays.
        { name: 'var/cache/new', content: 'upper' },
        { name: 'var/cache/.wh..wh..opq' },
        // A whiteout of a file this same layer made hides nothing.
        { name: 'etc/fresh', content: 'upper' },
        { name: 'etc/.wh.fresh' },
      ]);
      expect(readdirSync(join(root, 'etc')).sort()).toEqual(['fresh', 'keep']);
      expect(readdirSync(join(root, 'var/cache'))).toEqual(['new']);
    });

    it('lets an upper layer replace a directory by a file and a file by a directory', async () => {
      await layer([{ name: 'a/inner', content: '1' }, { name: 'b', content: 'file' }]);
      await layer([{ name: 'a', content: 'now a file' }, { name: 'b/', type: 'directory' }, { name: 'b/inner', content: '2' }]);
      expect(readFileSync(join(root, 'a'), 'utf8')).toBe('now a file');
      expect(readFileSync(join(root, 'b/inner'), 'utf8')).toBe('2');
    });

    it('refuses a whiteout that climbs out', async () => {
      writeFileSync(join(outside, 'victim'), 'x');
      await expect(layer([{ name: '../outside/.wh.victim' }])).rejects.toThrow(UnsafeArchiveError);
      expect(readdirSync(outside)).toEqual(['victim']);
    });
  });
});
