import { execFile } from 'node:child_process';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

/** fsyncs a directory, so the names created, renamed or removed in it survive power loss. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Renames a file or directory so that the move survives power loss: the parent of the new name is
 * fsynced (and the old one's, when it differs), so after a crash the entry is at one name or the
 * other, never lost. What is renamed must already be durable (see syncFileSystem).
 */
export async function renameDurably(from: string, to: string): Promise<void> {
  await rename(from, to);
  await syncDirectory(dirname(to));
  if (dirname(from) !== dirname(to)) await syncDirectory(dirname(from));
}

/**
 * Flushes everything written to the filesystem that holds `path` (syncfs(2), through coreutils'
 * `sync -f`: Node has no binding). One call makes a whole tree written by other processes (a
 * `cp -a` of a layer) durable, where fsyncing file by file would cost a call per file.
 */
export async function syncFileSystem(path: string): Promise<void> {
  await promisify(execFile)('sync', ['-f', path]);
}
