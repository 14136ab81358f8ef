import busboy from 'busboy';
import type { Request } from 'express';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DomainError, invalid } from '@arbor/domain';
import { renameDurably } from '@arbor/durable-files';

/** The file parts an upload may name (the contract: `file` or `tarball`). */
const FILE_FIELDS = new Set(['file', 'tarball']);
/** What a multipart body may hold besides its file: a few small fields, headers. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/**
 * Streams the tarball of a `multipart/form-data` upload to `file` (written as `file.part`, fsynced,
 * renamed once complete), never holding it in memory (busboy parses the stream as it arrives).
 * More than `maxBytes` is a 413: what was written goes, and the connection is closed rather than
 * read to its end. A body without a file part named `file` or `tarball` is a 400.
 */
export async function receiveUpload(request: Request, file: string, maxBytes: number): Promise<{ bytes: number }> {
  const type = request.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(type)) throw invalid('the body must be multipart/form-data with the tarball in a file part named `file` or `tarball`');
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD) throw tooLarge(request, maxBytes);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.part`;
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: request.headers, limits: { files: 1, fileSize: maxBytes, fields: 16, fieldSize: 64 * 1024, parts: 32 } });
  } catch (error) {
    throw invalid(`the multipart body cannot be read: ${(error as Error).message}`);
  }
  let bytes = 0;
  let found = false;
  let settle!: { resolve: () => void; reject: (error: Error) => void };
  const parsed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  let writing: Promise<void> = Promise.resolve();
  parser.on('file', (field, stream) => {
    if (!FILE_FIELDS.has(field) || found) {
      stream.resume();
      return;
    }
    found = true;
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    // Over the cap: the answer is a 413 at once; nothing more of the body is read.
    stream.on('limit', () => settle.reject(tooLarge(request, maxBytes)));
    writing = pipeline(stream, createWriteStream(partial, { mode: 0o600, flush: true }));
    writing.catch(settle.reject);
  });
  parser.on('close', () => settle.resolve());
  parser.on('error', (error: Error) => settle.reject(invalid(`the multipart body cannot be read: ${error.message}`)));
  request.on('error', (error) => settle.reject(error));
  request.on('aborted', () => settle.reject(invalid('the upload was cut off before its end')));
  try {
    request.pipe(parser);
    await parsed;
    await writing;
    if (!found) throw invalid('the multipart body has no file part named `file` or `tarball`');
    await renameDurably(partial, file);
    return { bytes };
  } catch (error) {
    request.unpipe(parser);
    parser.destroy();
    await writing.catch(() => {});
    await rm(partial, { force: true });
    throw error;
  }
}

function tooLarge(request: Request, maxBytes: number): DomainError {
  // Stop reading: the rest of the body is not wanted, and the answer closes the connection.
  request.res?.setHeader('Connection', 'close');
  return new DomainError('too_large', `the upload is larger than the limit of ${Math.round(maxBytes / 1048576)} MiB (ARBOR_IMAGE_ARCHIVE_MAX_MIB)`);
}
