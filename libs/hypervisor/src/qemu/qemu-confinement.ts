import { chmod, chown } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';

/**
 * The unprivileged host user every machine's QEMU becomes once it has opened what it needs at
 * start (`-runas`): uid and gid 1879113728, right after the sandbox driver's id range (see
 * sandbox/guest-ids.ts) in the span no host user, daemon or container range uses. A number, not a
 * named user: QEMU 7.2 takes `uid:gid`, so nothing is added to the host's passwd. It holds no
 * capability, and before dropping to it QEMU chroots into its machine's directory (`-chroot`), the
 * one place it still opens files in afterwards (its top disk layer again when a migration hands
 * the disk over or takes it back, new layers at a commit, the migration socket; see
 * nameInsideQemu): the rest of the host's file system, other machines and the data directory
 * included, is not in its world. The directory is 0700 and this user's; the chroot also spares
 * QEMU walking the data directory, which an operator may keep 0700.
 */
export const QEMU_USER = { uid: 1_879_113_728, gid: 1_879_113_728 } as const;

/**
 * QEMU's own seccomp filter (`-sandbox on`): obsolete system calls, spawning processes (fork/exec)
 * and resource control (scheduler, CPU affinity) refused. Elevating privileges stays allowed only
 * because QEMU 7.2 installs the filter before its own -runas step, whose setuid the deny option
 * kills (SIGSYS); after -runas, with no capability and every uid the unprivileged one, set*uid
 * cannot raise it. spawn=deny is why memory snapshots go through a socket, not `exec:cat`.
 */
const SANDBOX = 'on,obsolete=deny,elevateprivileges=allow,spawn=deny,resourcecontrol=deny';

/** What a machine's QEMU is started with on top of its machine arguments. */
export function confinementArguments(machineDir: string): string[] {
  return ['-sandbox', SANDBOX, '-chroot', machineDir, '-runas', `${QEMU_USER.uid}:${QEMU_USER.gid}`];
}

/**
 * How QEMU names a file of its machine's directory: relative, so that the same name holds before
 * the chroot (QEMU starts in that directory) and after it (in its root). QEMU opens its top layer
 * again by the name it was given (to drop or take back write access around a migration), so a
 * host path would not do once it is chrooted.
 */
export function nameInsideQemu(machineDir: string, hostPath: string): string {
  const inside = relative(machineDir, hostPath);
  if (!inside || inside.startsWith('..') || isAbsolute(inside)) throw new Error(`${hostPath} is outside QEMU's root ${machineDir}`);
  return inside;
}

/** A layer that became immutable: root's, read-only for everyone (QEMU keeps reading it as a backing file). */
export async function sealLayer(path: string): Promise<void> {
  await chown(path, 0, 0);
  await chmod(path, 0o444);
}

/** Gives a file QEMU must open (or reopen) after -runas to QEMU's user. */
export async function handToQemu(path: string): Promise<void> {
  await chown(path, QEMU_USER.uid, QEMU_USER.gid);
}
