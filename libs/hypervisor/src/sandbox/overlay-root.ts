import { chmod, lchown, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { MachineLayout } from './machine-layout';
import { runCommand } from '../host/run-command';
import { GUEST_IDS } from './guest-ids';

/**
 * Keeps every layer a plain directory tree (whiteouts and opaque dirs only), so an upper dir can be
 * copied with `cp -a` and reused as a lower layer: no redirects, metacopy-only files or index.
 */
const PLAIN_LAYERS = 'redirect_dir=off,metacopy=off,index=off';
/**
 * Every host-side mount of guest data: nothing on it acts as a device or setuid program on the
 * host, and nothing on it runs there. The machine's root itself cannot be noexec (the machine runs
 * its programs from it, and the flag would carry into its mount namespace): it is nosuid and nodev
 * only, and no_new_privs makes setuid bits inert inside the machine anyway.
 */
export const HOST_SIDE_OPTIONS = 'nosuid,nodev,noexec';
const ROOT_OPTIONS = 'nosuid,nodev';
/** mount(2) takes the option string in one page; longer lowerdir lists fail with a vague error. */
const MAX_OPTIONS_LENGTH = 4095;

/** Options for overlayfs, checked for what would silently split or overflow the option string. */
export function overlayOptions(lowers: string[], writable?: { upper: string; work: string }): string {
  const dirs = [...lowers, ...(writable ? [writable.upper, writable.work] : [])];
  const bad = dirs.find((dir) => /[:,\\]/.test(dir));
  if (bad) throw new Error(`overlay layer path ${bad} contains ':', ',' or '\\' (move the state or snapshot directory)`);
  const parts = [`lowerdir=${lowers.join(':')}`];
  if (writable) parts.push(`upperdir=${writable.upper}`, `workdir=${writable.work}`);
  const options = [...parts, PLAIN_LAYERS].join(',');
  if (options.length > MAX_OPTIONS_LENGTH) {
    throw new Error(`overlay options are ${options.length} bytes (limit ${MAX_OPTIONS_LENGTH}): shorten the data directory path`);
  }
  return options;
}

/**
 * Guest root (an unprivileged host id) mounts the root from inside the machine's user namespace,
 * so it must be able to walk every directory on the way to it (MACHINE_ROOTS_DIR). Its parent may
 * have been made 0700 by another part of Arbor (the network registry beside it): add the walk bit
 * to each parent Arbor owns, never the read bit.
 */
async function makeWalkable(rootsDir: string): Promise<void> {
  await mkdir(rootsDir, { recursive: true, mode: 0o711 });
  await chmod(rootsDir, 0o711);
  const parent = dirname(rootsDir);
  const mode = (await stat(parent)).mode & 0o7777;
  if ((mode & 0o011) !== 0o011) await chmod(parent, mode | 0o011);
}

/**
 * Mounts the machine's copy-on-write root: `lowers` (top first: identity layer, snapshot layers,
 * base) are read-only; every write lands in the machine's own upper layer on its disk, so machines
 * never see each other's files and snapshots never change.
 */
export async function mountOverlayRoot(lowers: string[], layout: MachineLayout): Promise<void> {
  for (const dir of [layout.upper, layout.work]) await mkdir(dir, { recursive: true });
  await makeWalkable(dirname(layout.merged));
  await mkdir(layout.merged, { recursive: true });
  // The upper dir's own owner and mode become the machine's `/`: guest root's, as in the base.
  await lchown(layout.upper, GUEST_IDS.hostFirst, GUEST_IDS.hostFirst);
  const options = overlayOptions(lowers, { upper: layout.upper, work: layout.work });
  await runCommand('mount', ['-t', 'overlay', 'overlay', '-o', `${ROOT_OPTIONS},${options}`, layout.merged]);
}
