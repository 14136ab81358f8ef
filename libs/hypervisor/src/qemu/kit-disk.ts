import { existsSync } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withHostLock } from '../host/host-lock';
import { runCommand } from '../host/run-command';
import { ensureGuestKit, GUEST_KIT_NAME } from '../kit/guest-kit';

export function kitDiskPath(cacheDir: string): string {
  return join(cacheDir, 'qemu', `${GUEST_KIT_NAME}.ext4`);
}

/**
 * The guest kit as a qemu machine sees it: an ext4 image of the kit's tree (no journal: it is only
 * ever mounted read-only), attached read-only as a second disk and mounted at /.arbor by the
 * initramfs. Kept for as long as the cache: machines and snapshots name the kit disk they started
 * with, since a machine restored from memory must find the very disk it had.
 */
export async function ensureKitDisk(cacheDir: string, log: (line: string) => void): Promise<string> {
  const target = kitDiskPath(cacheDir);
  if (existsSync(target)) return target;
  const kit = await ensureGuestKit(cacheDir, log);
  await mkdir(join(cacheDir, 'qemu'), { recursive: true });
  await withHostLock(`${target}.lock`, async () => {
    if (existsSync(target)) return;
    const scratch = `${target}.partial`;
    await rm(scratch, { force: true });
    const usedMib = Number((await runCommand('du', ['-sm', '--apparent-size', kit.tree])).split(/\s/)[0]);
    const sizeMib = usedMib + 16;
    await runCommand('mkfs.ext4', ['-q', '-F', '-L', 'arbor-kit', '-O', '^has_journal', '-m', '0', '-d', kit.tree, scratch, `${sizeMib}M`]);
    await chmod(scratch, 0o444);
    await rename(scratch, target);
    log(`qemu: guest kit disk ${target} (${sizeMib} MiB)`);
  });
  return target;
}
