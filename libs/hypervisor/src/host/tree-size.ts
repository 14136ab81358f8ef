import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The apparent size of the files and symlinks under `dir` (not following symlinks), and how many entries it holds. */
export async function treeSize(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const visit = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      const stat = await lstat(child);
      entries++;
      if (stat.isFile() || stat.isSymbolicLink()) bytes += stat.size;
      if (stat.isDirectory()) await visit(child);
    }
  };
  await visit(dir);
  return { bytes, entries };
}
