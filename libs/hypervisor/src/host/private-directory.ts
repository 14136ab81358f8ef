import { chmod, chown, mkdir } from 'node:fs/promises';

/**
 * Creates `dir` (and its parents) if need be and makes it 0700: a driver's state and snapshot
 * directories hold guest disks and layers, which no other local user may read or run anything
 * from. `owner` hands it to the one unprivileged user that must open files in it (QEMU's).
 */
export async function ensurePrivateDirectory(dir: string, owner?: { uid: number; gid: number }): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (owner) await chown(dir, owner.uid, owner.gid);
  await chmod(dir, 0o700);
}
