import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  futimesSync,
  linkSync,
  lchownSync,
  lutimesSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  symlinkSync,
  chmodSync,
  chownSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import type { Readable } from 'node:stream';
import { extract, type Header } from 'tar-stream';
import { entryComponents, lstatOrNull, RootScopedPaths } from './root-scoped-path';
import { ArchiveTooLargeError, UnsafeArchiveError } from './unsafe-archive-error';

/**
 * What one extraction may write, shared by every layer of an image: the bytes of file contents
 * and the number of entries. Exceeding either fails the extraction (a tar or gzip bomb).
 */
export class ExtractionBudget {
  bytes = 0;
  entries = 0;

  constructor(
    readonly maxBytes: number,
    readonly maxEntries: number,
  ) {}

  addBytes(count: number): void {
    this.bytes += count;
    if (this.bytes > this.maxBytes) throw new ArchiveTooLargeError(`the root filesystem is larger than the limit of ${mib(this.maxBytes)} MiB`);
  }

  addEntry(): void {
    if (++this.entries > this.maxEntries) throw new ArchiveTooLargeError(`the root filesystem has more than the limit of ${this.maxEntries} entries`);
  }
}

export interface ExtractOptions {
  /**
   * `rootfs`: the archive is a whole root filesystem. `layer`: an OCI/Docker image layer applied
   * over what the directory holds: `.wh.<name>` removes `<name>` of the layers below, and
   * `.wh..wh..opq` empties its directory of what the layers below put there.
   */
  mode: 'rootfs' | 'layer';
  budget: ExtractionBudget;
  /** Called now and then as entries are written (not more than once per chunk of the archive). */
  onProgress?: (written: { bytes: number; entries: number }) => void;
}

/** What an extraction did besides writing files: what it left out, and why. */
export interface ExtractReport {
  entries: number;
  bytes: number;
  /** Device nodes left out: a machine's /dev is its own (the drivers mount one). */
  skipped_devices: number;
  /** Extended attributes (file capabilities, SELinux labels) are not carried over. */
  skipped_xattrs: number;
}

const isRoot = process.getuid?.() === 0;

/** A header with the pax records that came before it (tar-stream keeps them in `pax`). */
type PaxHeaders = Header & { pax?: Record<string, string> | null };
const NOFOLLOW_CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Extracts a tar stream (already decompressed) into `root`, a directory the caller owns, safely:
 * - a name is taken inside the root (leading `/` dropped, `..` above the root refused);
 * - nothing is written through a symbolic link: links on the way to an entry are followed within
 *   the root (RootScopedPaths), and an entry's own last component is replaced, never followed;
 * - a hard link must name an entry already inside the root (resolved the same way);
 * - device nodes are left out (neutralised), FIFOs made; setuid bits, numeric owners, modes and
 *   times are kept as the archive has them (the image's own ids; the caller is root);
 * - file contents and entries count against the budget.
 * File system calls are synchronous (a few microseconds each, between chunks of the archive, so
 * the event loop is never held for long); the archive is read as a stream.
 */
export async function extractTar(input: Readable, root: string, options: ExtractOptions): Promise<ExtractReport> {
  const extractor = new SafeExtractor(root, options);
  const parser = extract();
  // A broken input (a corrupt gzip stream, a dropped download) ends the entries with its error,
  // which is the reason given (an entry being read then only hears that the parser was destroyed).
  let broken: Error | null = null;
  input.on('error', (error) => parser.destroy((broken ??= error)));
  input.pipe(parser);
  try {
    for await (const entry of parser) {
      await extractor.entry(entry.header as PaxHeaders, entry as AsyncIterable<Buffer>);
      options.onProgress?.({ bytes: options.budget.bytes, entries: options.budget.entries });
    }
  } catch (error) {
    input.unpipe(parser);
    input.destroy();
    parser.destroy();
    throw translate(broken ?? error);
  }
  extractor.finish();
  return extractor.report;
}

/** tar-stream's format errors say "tar"; others pass as they are. */
function translate(error: unknown): Error {
  if (error instanceof UnsafeArchiveError || error instanceof ArchiveTooLargeError) return error;
  const message = (error as Error)?.message ?? String(error);
  if (/tar header|unexpected end|premature/i.test(message)) return new UnsafeArchiveError(`not a readable tar archive: ${message}`);
  return error as Error;
}

class SafeExtractor {
  readonly report: ExtractReport = { entries: 0, bytes: 0, skipped_devices: 0, skipped_xattrs: 0 };
  private readonly paths: RootScopedPaths;
  /** Real paths (relative to the root) this archive wrote: a layer's whiteouts spare them. */
  private readonly written = new Set<string>();
  /** Directory times are set last: writing their entries would change them again. */
  private readonly directoryTimes: { path: string; mtime: Date }[] = [];

  constructor(
    private readonly root: string,
    private readonly options: ExtractOptions,
  ) {
    this.paths = new RootScopedPaths(root);
  }

  async entry(header: PaxHeaders, data: AsyncIterable<Buffer>): Promise<void> {
    const { budget } = this.options;
    const components = entryComponents(header.name);
    if (components.length === 0) {
      // The root itself ("./"): its mode and owner are the image's.
      if (header.type === 'directory') this.applyDirectoryMetadata(this.root, header);
      return drain(data);
    }
    budget.addEntry();
    this.report.entries++;
    if (header.pax && Object.keys(header.pax).some((key) => key.startsWith('SCHILY.xattr.') || key.startsWith('LIBARCHIVE.xattr.'))) this.report.skipped_xattrs++;
    const base = components[components.length - 1];
    const parent = this.paths.directory(components.slice(0, -1), header.name);
    const relative = parent === this.root ? base : `${parent.slice(this.root.length + 1)}/${base}`;

    if (this.options.mode === 'layer' && base.startsWith('.wh.')) {
      this.whiteout(parent, base, relative);
      return drain(data);
    }
    const path = `${parent}/${base}`;
    switch (header.type) {
      case 'directory':
        this.makeDirectory(path, header);
        break;
      case 'file':
      case 'contiguous-file':
        await this.writeFile(path, header, data);
        break;
      case 'symlink':
        this.replace(path);
        symlinkSync(header.linkname ?? '', path);
        this.own(path, header);
        lutimesSync(path, mtimeOf(header), mtimeOf(header));
        break;
      case 'link':
        this.hardLink(path, header);
        break;
      case 'fifo':
        this.replace(path);
        run('mkfifo', ['-m', (modeOf(header) & 0o7777).toString(8), path]);
        this.own(path, header);
        break;
      case 'character-device':
      case 'block-device':
        this.report.skipped_devices++;
        break;
      default:
        throw new UnsafeArchiveError(`entry '${header.name}' is of a kind a root filesystem cannot hold (${header.type})`);
    }
    this.written.add(relative);
    await drain(data);
  }

  finish(): void {
    // Deepest first, so setting a directory's time is not undone by its parent's.
    for (const { path, mtime } of this.directoryTimes.reverse()) utimesSync(path, mtime, mtime);
    this.report.bytes = this.options.budget.bytes;
  }

  /** `.wh.<name>` removes the lower layers' `<name>`; `.wh..wh..opq` their whole directory's contents. */
  private whiteout(parent: string, base: string, relative: string): void {
    const prefix = relative.slice(0, relative.length - base.length);
    if (base === '.wh..wh..opq') {
      for (const name of readdirSync(parent)) if (!this.written.has(prefix + name)) rmSync(`${parent}/${name}`, { recursive: true, force: true });
    } else if (!base.startsWith('.wh..wh.')) {
      const name = base.slice('.wh.'.length);
      if (name === '' || name === '.' || name === '..') throw new UnsafeArchiveError(`whiteout '${relative}' names no file`);
      if (!this.written.has(prefix + name)) rmSync(`${parent}/${name}`, { recursive: true, force: true });
    }
    // Other `.wh..wh.*` names are aufs' own bookkeeping: nothing to apply.
    this.paths.forget();
  }

  private makeDirectory(path: string, header: PaxHeaders): void {
    const existing = lstatOrNull(path);
    if (existing && !existing.isDirectory()) this.replace(path);
    if (!existing || !existing.isDirectory()) mkdirSync(path, { mode: 0o700 });
    this.applyDirectoryMetadata(path, header);
  }

  private applyDirectoryMetadata(path: string, header: PaxHeaders): void {
    if (isRoot) chownSync(path, ...idsOf(header));
    chmodSync(path, modeOf(header) & 0o7777);
    this.directoryTimes.push({ path, mtime: mtimeOf(header) });
  }

  private async writeFile(path: string, header: PaxHeaders, data: AsyncIterable<Buffer>): Promise<void> {
    const fd = this.createFile(path);
    try {
      for await (const chunk of data) {
        this.options.budget.addBytes(chunk.length);
        for (let offset = 0; offset < chunk.length; ) offset += writeSync(fd, chunk, offset);
      }
      if (isRoot) fchownSync(fd, ...idsOf(header));
      // After the owner: chown clears setuid and setgid bits.
      fchmodSync(fd, modeOf(header) & 0o7777);
      futimesSync(fd, mtimeOf(header), mtimeOf(header));
    } finally {
      closeSync(fd);
    }
  }

  /**
   * A new file at `path`, open for writing. Tried first as it is (O_EXCL: nothing is there, and a
   * link there is not followed), and only when something is there is it replaced: most entries of
   * an archive are new names, and an lstat before each cost a system call per entry.
   */
  private createFile(path: string): number {
    try {
      return openSync(path, NOFOLLOW_CREATE, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    this.replace(path);
    return openSync(path, NOFOLLOW_CREATE, 0o600);
  }

  private hardLink(path: string, header: Header): void {
    const targetComponents = entryComponents(header.linkname ?? '', `hard link '${header.name}' to`);
    if (targetComponents.length === 0) throw new UnsafeArchiveError(`hard link '${header.name}' names no file`);
    const targetParent = this.paths.directory(targetComponents.slice(0, -1), header.name);
    const target = `${targetParent}/${targetComponents[targetComponents.length - 1]}`;
    const stats = lstatOrNull(target);
    if (!stats) throw new UnsafeArchiveError(`hard link '${header.name}' names '${header.linkname}', which the archive has not made`);
    if (stats.isDirectory()) throw new UnsafeArchiveError(`hard link '${header.name}' names a directory`);
    if (target === path) return;
    this.replace(path);
    // link(2) on Linux never follows a symbolic link as its target: a link to a link stays one.
    linkSync(target, path);
  }

  /** Makes room for a new entry: whatever is there goes (a directory with its contents), never followed. */
  private replace(path: string): void {
    const existing = lstatOrNull(path);
    if (!existing) return;
    rmSync(path, { recursive: existing.isDirectory(), force: true });
    if (existing.isDirectory() || existing.isSymbolicLink()) this.paths.forget();
  }

  /** The owner of what is at `path` itself (a link, a FIFO: never what it points to). */
  private own(path: string, header: PaxHeaders): void {
    if (isRoot) lchownSync(path, ...idsOf(header));
  }
}

/** pax records override the ustar fields (ids past 2^21, times with fractions). */
function idsOf(header: PaxHeaders): [uid: number, gid: number] {
  const uid = Number(header.pax?.uid ?? header.uid ?? 0);
  const gid = Number(header.pax?.gid ?? header.gid ?? 0);
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid) || uid < 0 || gid < 0 || uid > 0xffffffff || gid > 0xffffffff) {
    throw new UnsafeArchiveError(`entry '${header.name}' has an owner that is no user id (${header.pax?.uid ?? header.uid}:${header.pax?.gid ?? header.gid})`);
  }
  return [uid, gid];
}

function modeOf(header: Header): number {
  return header.mode ?? 0o644;
}

function mtimeOf(header: PaxHeaders): Date {
  const pax = header.pax?.mtime;
  if (pax !== undefined && Number.isFinite(Number(pax))) return new Date(Number(pax) * 1000);
  return header.mtime ?? new Date(0);
}

async function drain(data: AsyncIterable<Buffer>): Promise<void> {
  for await (const _ of data);
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.error?.message ?? result.stderr.toString().trim()}`);
}

const mib = (bytes: number) => Math.round(bytes / (1024 * 1024));
