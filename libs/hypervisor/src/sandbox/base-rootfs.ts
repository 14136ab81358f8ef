import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withHostLock } from '../host/host-lock';
import { unmountAllUnder } from '../host/host-mounts';
import { runStreamingLines } from '../host/run-command';

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
const ROOTFS_NAME = `rootfs-${SUITE}-minbase`;

/** Where the shared base root filesystem lives; every machine's overlay uses it as its lower layer. */
export function baseRootfsPath(cacheDir: string): string {
  return join(cacheDir, 'sandbox', ROOTFS_NAME);
}

/**
 * Builds the base root filesystem once per host with debootstrap (minbase). The build happens in a
 * scratch directory that is renamed into place when complete, under a host-wide lock, so a reader
 * never sees half a root filesystem and two processes never build at once.
 */
export async function ensureBaseRootfs(cacheDir: string, log: (line: string) => void): Promise<string> {
  const target = baseRootfsPath(cacheDir);
  if (existsSync(target)) return target;
  const sandboxCache = join(cacheDir, 'sandbox');
  await mkdir(sandboxCache, { recursive: true });
  await withHostLock(join(sandboxCache, `${ROOTFS_NAME}.lock`), async () => {
    if (existsSync(target)) return; // another process built it while we waited
    const scratch = `${target}.partial`;
    // A crashed build may have left debootstrap's /proc or /sys mounted in the scratch dir.
    await unmountAllUnder(scratch);
    await rm(scratch, { recursive: true, force: true });
    log(`sandbox: building base root filesystem (debootstrap --variant=minbase ${SUITE}) into ${target}`);
    await runStreamingLines('debootstrap', ['--variant=minbase', SUITE, scratch, MIRROR], (line) =>
      log(`debootstrap: ${line}`),
    );
    await rm(join(scratch, 'var/cache/apt/archives'), { recursive: true, force: true });
    await mkdir(join(scratch, 'var/cache/apt/archives/partial'), { recursive: true });
    await rename(scratch, target);
    log(`sandbox: base root filesystem ready at ${target}`);
  });
  return target;
}
