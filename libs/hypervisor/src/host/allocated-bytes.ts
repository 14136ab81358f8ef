import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What a file or a directory tree takes on its disk: allocated blocks, not apparent sizes (a
 * sparse file counts what it holds), each hard-linked file once, symbolic links not followed.
 */
export async function allocatedBytes(path: string): Promise<number> {
  const seen = new Set<string>();
  const walk = async (entry: string): Promise<number> => {
    const stats = await lstat(entry).catch(() => null);
    if (!stats) return 0;
    const inode = `${stats.dev}:${stats.ino}`;
    if (seen.has(inode)) return 0;
    seen.add(inode);
    let bytes = stats.blocks * 512;
    if (stats.isDirectory()) {
      for (const name of await readdir(entry).catch(() => [] as string[])) bytes += await walk(join(entry, name));
    }
    return bytes;
  };
  return walk(path);
}
