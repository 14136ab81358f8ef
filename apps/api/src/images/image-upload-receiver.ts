import busboy from 'busboy';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { UnpackedUpload } from '@arbor/application';
import { DomainError, invalid } from '@arbor/domain';
import { syncFileSystem } from '@arbor/durable-files';
import { extractInThread } from '@arbor/image-sources';

/** The file parts an upload may name (the contract: `file` or `tarball`). */
const FILE_FIELDS = new Set(['file', 'tarball']);
/** What a multipart body may hold besides its file: a few small fields, headers. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/** The upload's request, whose body is read, and its response, which a refusal closes. */
export interface UploadExchange {
  request: IncomingMessage;
  response: ServerResponse;
}

export interface UploadLimits {
  /** The most the file part may hold (ARBOR_IMAGE_ARCHIVE_MAX_MIB): more is a 413. */
  maxBytes: number;
  /** What the unpacked root filesystem may hold (ARBOR_IMAGE_ROOTFS_MAX_*): more fails the job. */
  rootfsMaxBytes: number;
  rootfsMaxEntries: number;
}

/**
 * Receives the tarball of a `multipart/form-data` upload and unpacks it as it arrives (busboy's
 * file stream → a thread of its own: gzip/zstd decoding told by its first bytes → the safe
 * extractor, see extractInThread), into `target`
 * (see uploadTreeOf: `rootfs/` and `unpacked.json`): the archive itself is never written. The
 * tree is written as `target.part-<random>`, renamed once the body is in, and flushed with one
 * syncfs, so an upload answered 201 survives a crash. Nothing is held in memory beyond a chunk:
 * the request is read only as fast as the files are written.
 *
 * An archive that cannot be unpacked (unsafe, corrupt, over the root filesystem caps) is not the
 * request's fault alone and is the job's to report, as when the worker unpacked it: the rest of
 * the body is read (and counted against the cap) and `unpacked.json` says why; the job fails with
 * that reason. More than `maxBytes` is a 413: what was written goes, and the connection is closed
 * rather than read to its end. A body without a file part named `file` or `tarball` is a 400; a
 * body cut off leaves nothing. `taken` tells whether a job already holds `target` (a retry of a
 * request whose first attempt got that far): its tree then stands, and this one goes.
 */
export async function receiveUpload({ request, response }: UploadExchange, target: string, limits: UploadLimits, taken: () => Promise<boolean>): Promise<{ bytes: number }> {
  const type = request.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(type)) throw invalid('the body must be multipart/form-data with the tarball in a file part named `file` or `tarball`');
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes + MULTIPART_OVERHEAD) throw tooLarge(response, limits.maxBytes);
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: request.headers, limits: { files: 1, fileSize: limits.maxBytes, fields: 16, fieldSize: 64 * 1024, parts: 32 } });
  } catch (error) {
    throw invalid(`the multipart body cannot be read: ${(error as Error).message}`);
  }
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  const partial = await mkdtemp(`${target}.part-`);
  const rootfs = join(partial, 'rootfs');
  await mkdir(rootfs, { mode: 0o700 });

  let bytes = 0;
  let found = false;
  let settle!: { resolve: () => void; reject: (error: Error) => void };
  const parsed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  /** The archive as it arrives, fed to the extractor while it wants it. */
  const archive = new PassThrough({ highWaterMark: 1 << 20 });
  archive.on('error', () => {}); // its reader reports
  let unpacking: Promise<UnpackedUpload> = Promise.resolve({ error: 'no file part' });
  parser.on('file', (field, stream: Readable) => {
    if (!FILE_FIELDS.has(field) || found) {
      stream.resume();
      return;
    }
    found = true;
    stream.on('error', () => {}); // the parser's own error, or its destruction: the request's outcome says what happened
    unpacking = unpack(archive, rootfs, limits);
    // Refused or failed: the rest of the file is only counted (the answer waits for the body's end).
    let feeding = true;
    void unpacking.then(() => {
      feeding = false;
      stream.resume();
    });
    archive.on('drain', () => stream.resume());
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (feeding && !archive.destroyed && !archive.write(chunk)) stream.pause();
    });
    stream.on('end', () => archive.end());
    // Over the cap: the answer is a 413 at once; nothing more of the body is read.
    stream.on('limit', () => settle.reject(tooLarge(response, limits.maxBytes)));
  });
  parser.on('close', () => settle.resolve());
  parser.on('error', (error: Error) => settle.reject(invalid(`the multipart body cannot be read: ${error.message}`)));
  request.on('error', (error) => settle.reject(error));
  request.on('aborted', () => settle.reject(invalid('the upload was cut off before its end')));
  try {
    request.pipe(parser);
    await parsed;
    if (!found) throw invalid('the multipart body has no file part named `file` or `tarball`');
    if (!archive.writableEnded) archive.end();
    const unpacked = await unpacking;
    // A refused archive keeps nothing of what it wrote: the job only needs the reason.
    if ('error' in unpacked) await rm(rootfs, { recursive: true, force: true });
    await writeFile(join(partial, 'unpacked.json'), JSON.stringify(unpacked), { mode: 0o600 });
    await moveInPlace(partial, target, taken);
    // One flush of the file system for the whole tree, its report and the rename (rather than an
    // fsync per file): the job asked for next must find all of it after a crash.
    await syncFileSystem(dirname(target));
    return { bytes };
  } catch (error) {
    request.unpipe(parser);
    parser.destroy();
    archive.destroy(new Error('the upload was not received'));
    await unpacking.catch(() => {});
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The archive unpacked into `rootfs` on a thread of its own (the extractor's file system calls
 * are synchronous, and the api's event loop serves meanwhile): its report, or why it could not be.
 */
async function unpack(archive: Readable, rootfs: string, limits: UploadLimits): Promise<UnpackedUpload> {
  try {
    const { entries, bytes, skipped_devices, skipped_xattrs } = await extractInThread(archive, rootfs, { mode: 'rootfs', maxBytes: limits.rootfsMaxBytes, maxEntries: limits.rootfsMaxEntries });
    return { entries, bytes, skipped_devices, skipped_xattrs };
  } catch (error) {
    archive.destroy();
    return { error: (error as Error).message };
  }
}

/**
 * `partial` becomes `target`. One there already was left by an earlier attempt of the same
 * request (same id): it goes unless a job holds it, in which case this copy does.
 */
async function moveInPlace(partial: string, target: string, taken: () => Promise<boolean>): Promise<void> {
  if (existsSync(target)) {
    if (await taken()) {
      await rm(partial, { recursive: true, force: true });
      return;
    }
    await rm(target, { recursive: true, force: true });
  }
  await rename(partial, target);
}

function tooLarge(response: ServerResponse, maxBytes: number): DomainError {
  // Stop reading: the rest of the body is not wanted, and the answer closes the connection.
  response.setHeader('Connection', 'close');
  return new DomainError('too_large', `the upload is larger than the limit of ${Math.round(maxBytes / 1048576)} MiB (ARBOR_IMAGE_ARCHIVE_MAX_MIB)`);
}
