import { lstat, rename } from 'node:fs/promises';
import { runCommand } from '../host/run-command';

/**
 * Moves a directory tree to `target` (a rename), or copies it when they are on different file
 * systems (cp -a: symlinks copied as symlinks, never followed). `source` must be a directory,
 * not a symlink to one.
 */
export async function moveOrCopyTree(source: string, target: string): Promise<void> {
  const stat = await lstat(source);
  if (!stat.isDirectory()) throw new Error(`${source} is not a directory`);
  await rename(source, target).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EXDEV') throw error;
    await runCommand('cp', ['-a', '--no-target-directory', source, target]);
  });
}
