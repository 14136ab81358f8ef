import { copyFile, link } from 'node:fs/promises';

/** A hard link (the file stays where QEMU or a snapshot has it open), or a copy across file systems. */
export async function linkOrCopy(from: string, to: string): Promise<void> {
  await link(from, to).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EXDEV') throw error;
    await copyFile(from, to);
  });
}
