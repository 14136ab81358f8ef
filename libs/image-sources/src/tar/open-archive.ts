import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { UnsafeArchiveError } from './unsafe-archive-error';

export type Compression = 'none' | 'gzip' | 'zstd';

/** The compression of an archive, by its first bytes (what a file says of itself, not its name or media type). */
export function compressionOf(head: Buffer): Compression {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528) return 'zstd';
  if (head.length >= 6 && head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) throw new UnsafeArchiveError('the archive is xz-compressed: use gzip, zstd or none');
  if (head.length >= 3 && head.subarray(0, 3).toString('latin1') === 'BZh') throw new UnsafeArchiveError('the archive is bzip2-compressed: use gzip, zstd or none');
  return 'none';
}

/**
 * The tar stream inside an archive file, decompressed as it is read: gzip with Node's zlib, zstd
 * with Debian's `zstd` (Node 20 has no zstd decoder of its own; the reference implementation, run
 * as a child process, decodes at hundreds of MiB/s on its own core, beside the extraction).
 * `onRead` hears how many bytes of the file have been read.
 */
export async function openArchive(file: string, onRead?: (bytes: number) => void): Promise<Readable> {
  const handle = await open(file, 'r');
  const head = Buffer.alloc(6);
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  const raw = createReadStream(file, { highWaterMark: 1 << 20 });
  if (onRead) {
    let read = 0;
    raw.on('data', (chunk) => onRead((read += chunk.length)));
  }
  return decompressed(raw, compressionOf(head));
}

/**
 * The tar stream inside an archive arriving as a stream (an upload as it is received): the
 * compression is told by its first bytes, read and put back (`unshift`) before anything is
 * decoded. An archive shorter than six bytes is taken as it is (and is no tar).
 */
export async function openArchiveStream(raw: Readable): Promise<Readable> {
  const { head, ended } = await new Promise<{ head: Buffer; ended: boolean }>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (error?: Error, ended = false) => {
      raw.pause();
      raw.off('data', onData).off('end', onEnd).off('error', done);
      if (error) return reject(error);
      const head = Buffer.concat(chunks);
      if (head.length > 0 && !ended) raw.unshift(head);
      resolve({ head, ended });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      if ((length += chunk.length) >= 6) done();
    };
    const onEnd = () => done(undefined, true);
    raw.on('data', onData).on('end', onEnd).on('error', done);
  });
  // All of it came before six bytes did: what there is, as a stream of its own.
  return decompressed(ended ? Readable.from(head.length > 0 ? [head] : []) : raw, compressionOf(head));
}

function decompressed(raw: Readable, compression: Compression): Readable {
  switch (compression) {
    case 'none':
      return raw;
    case 'gzip': {
      const gunzip = createGunzip({ chunkSize: 1 << 17 });
      raw.on('error', (error) => gunzip.destroy(error));
      raw.pipe(gunzip);
      const out = withMessage(gunzip, 'the gzip stream is corrupt');
      out.on('close', () => raw.destroy());
      return out;
    }
    case 'zstd':
      return zstdDecompress(raw);
  }
}

/** The stream through `zstd -dc`; a failure of zstd (corrupt data) becomes the stream's error. */
function zstdDecompress(raw: Readable): Readable {
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-2000)));
  raw.on('error', (error) => out.destroy(error));
  // zstd stopping early (corrupt input) closes its stdin: what is left of the file is not wanted.
  child.stdin.on('error', () => raw.destroy());
  raw.pipe(child.stdin);
  child.stdout.pipe(out, { end: false });
  child.on('error', (error) => out.destroy(new UnsafeArchiveError(`zstd could not run (is Debian's zstd installed?): ${error.message}`)));
  child.on('close', (code, signal) => {
    if (code === 0) out.end();
    else if (!out.destroyed) out.destroy(new UnsafeArchiveError(`the zstd stream is corrupt: ${stderr.trim() || `zstd exited ${code ?? signal}`}`));
  });
  // The reader gave up (a refused entry): zstd and the file stop too.
  out.on('close', () => {
    raw.destroy();
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return out;
}

/** Errors of a decompressor, with what they mean for an image. */
function withMessage(stream: Readable, meaning: string): Readable {
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  stream.on('error', (error) => out.destroy(new UnsafeArchiveError(`${meaning}: ${error.message}`)));
  stream.pipe(out);
  out.on('close', () => stream.destroy());
  return out;
}
