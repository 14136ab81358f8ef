import { randomBytes } from 'node:crypto';
import { link, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory } from './durable-rename';

export interface AtomicWriteOptions {
  /** Permission bits of a new file (default 0o644). */
  mode?: number;
  /** Keep an existing file: the first writer's content stands, and false is returned. */
  ifAbsent?: boolean;
  /**
   * false: still all or nothing, but no fsync (the new content may be lost to a power cut, the old
   * one then stands): for a file whose old content is as true as the new. Default true.
   */
  durable?: boolean;
}

/**
 * Writes a file that must survive a crash: a crash at any moment leaves the old content or the new,
 * never a torn file, and once this resolves the new content survives power loss. The content goes
 * to a temporary file beside the target (a name of its own, so concurrent writers never share
 * one), is fsynced, then renamed over the target (or hard-linked to it for `ifAbsent`, which fails
 * if the name exists), and the directory is fsynced so the new name is durable too.
 * Returns false when `ifAbsent` found the file there already.
 */
export async function writeFileAtomic(path: string, content: string | Buffer, options: AtomicWriteOptions = {}): Promise<boolean> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const file = await open(temporary, 'wx', options.mode ?? 0o644);
  try {
    await file.writeFile(content);
    if (options.durable !== false) await file.sync();
  } finally {
    await file.close();
  }
  let written = true;
  try {
    if (options.ifAbsent) {
      written = await link(temporary, path).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'EEXIST') return false;
          throw error;
        },
      );
      await rm(temporary, { force: true });
    } else {
      await rename(temporary, path);
    }
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (options.durable !== false) await syncDirectory(dirname(path));
  return written;
}

/** A JSON document (pretty-printed, newline-terminated), written as writeFileAtomic does. */
export function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions = {}): Promise<boolean> {
  return writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}
