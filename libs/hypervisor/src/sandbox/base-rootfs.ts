import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withHostLock } from '../host/host-lock';
import { unmountAllUnder } from '../host/host-mounts';
import { runCommand, runStreamingLines } from '../host/run-command';
import { configureSshd } from '../guest-ssh';
import { GUEST_IDS, shiftIntoGuestRange } from './guest-ids';

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
/**
 * Beyond minbase: the SSH server every machine runs (guest-ssh.ts) and iproute2, so `ip` shows a
 * machine its network.
 */
const PACKAGES = ['openssh-server', 'iproute2'];
/** Bump the version when the recipe changes: a new name means a fresh build next to the old one. */
const ROOTFS_NAME = `rootfs-${SUITE}-minbase-v2`;
/** The same tree owned by the machines' id range (see guest-ids.ts). */
const SHIFTED_NAME = `${ROOTFS_NAME}-ids-${GUEST_IDS.hostFirst}`;

/**
 * Where the shared base root filesystem lives, owned by the machines' id range; every machine's
 * overlay uses it as its lowest layer.
 */
export function baseRootfsPath(cacheDir: string): string {
  return join(cacheDir, 'sandbox', SHIFTED_NAME);
}

/**
 * Builds the base root filesystem once per host: debootstrap (minbase), then a copy shifted into
 * the machines' id range (guest root owns what host root owned). Each build happens in a scratch
 * directory that is renamed into place when complete, under a host-wide lock, so a reader never
 * sees half a root filesystem and two processes never build at once.
 */
export async function ensureBaseRootfs(cacheDir: string, log: (line: string) => void): Promise<string> {
  const target = baseRootfsPath(cacheDir);
  if (existsSync(target)) return target;
  const plain = await ensureDebootstrapped(cacheDir, log);
  await withHostLock(`${target}.lock`, async () => {
    if (existsSync(target)) return;
    const scratch = `${target}.partial`;
    await rm(scratch, { recursive: true, force: true });
    log(`sandbox: shifting the base root filesystem into the machines' id range (host ids from ${GUEST_IDS.hostFirst})`);
    await runCommand('cp', ['-a', plain, scratch]);
    await shiftIntoGuestRange(scratch);
    await rename(scratch, target);
  });
  return target;
}

/**
 * The debootstrap output as it comes, owned by host ids: the source of the shifted copy (and a
 * plain Debian minbase root the image tests build images from).
 */
export async function ensureDebootstrapped(cacheDir: string, log: (line: string) => void): Promise<string> {
  const sandboxCache = join(cacheDir, 'sandbox');
  const target = join(sandboxCache, ROOTFS_NAME);
  if (existsSync(target)) return target;
  await mkdir(sandboxCache, { recursive: true });
  await withHostLock(join(sandboxCache, `${ROOTFS_NAME}.lock`), async () => {
    if (existsSync(target)) return; // another process built it while we waited
    const scratch = `${target}.partial`;
    // A crashed build may have left debootstrap's /proc or /sys mounted in the scratch dir.
    await unmountAllUnder(scratch);
    await rm(scratch, { recursive: true, force: true });
    log(`sandbox: building base root filesystem (debootstrap --variant=minbase --include=${PACKAGES.join(',')} ${SUITE}) into ${target}`);
    await runStreamingLines('debootstrap', ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, scratch, MIRROR], (line) =>
      log(`debootstrap: ${line}`),
    );
    await configureSshd(scratch);
    await rm(join(scratch, 'var/cache/apt/archives'), { recursive: true, force: true });
    await mkdir(join(scratch, 'var/cache/apt/archives/partial'), { recursive: true });
    await rename(scratch, target);
    log(`sandbox: base root filesystem ready at ${target}`);
  });
  return target;
}
