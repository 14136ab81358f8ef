import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What the entries under `dir` take on disk (not following symlinks; a sparse file counts its data,
 * not its length), as the kit helper's prepare-tree counts it, and how many entries it holds.
 */
export async function treeSize(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const visit = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      const stat = await lstat(child);
      entries++;
      bytes += stat.blocks * 512;
      if (stat.isDirectory()) await visit(child);
    }
  };
  await visit(dir);
  return { bytes, entries };
}
