import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The host uids and gids every sandbox machine's user namespace maps its ids 0–65535 onto: guest
 * root is host uid 1879048192, an unprivileged id no host user or daemon has. The range starts
 * right above the ranges systemd hands to containers (524288–1879048191, e.g. nspawn's
 * --private-users=pick) and far above what useradd gives out in /etc/subuid (from 100000 up), so
 * no rootless container of a host user shares it; and it stays below 2^31, which some tools
 * still read as signed.
 *
 * One range shared by every machine, not one per machine: per-machine ranges need the root
 * filesystem's ownership per machine, either a chown of the whole base per create or idmapped
 * mounts of every layer, which Debian 12's util-linux (2.38) cannot make and runc 1.1 does not
 * offer. With one range the base is shifted once and layers (snapshots, branches) carry their
 * ownership as they are. What two machines sharing the range could do to each other is still
 * fenced by their own PID, mount, IPC, UTS, cgroup and user namespaces: neither sees the other's
 * processes (no signal, no ptrace) or files (its own root, host directories 0700).
 */
export const GUEST_IDS = { hostFirst: 1_879_048_192, count: 65_536 } as const;

/** The OCI uid/gid mapping of that range. */
export const GUEST_ID_MAPPING = [{ containerID: 0, hostID: GUEST_IDS.hostFirst, size: GUEST_IDS.count }];

/** The host id a guest id is stored as on disk (files the host writes for the guest). */
export function hostIdOf(guestId: number): number {
  if (!Number.isInteger(guestId) || guestId < 0 || guestId >= GUEST_IDS.count) throw new Error(`guest id ${guestId} is outside the mapped range`);
  return GUEST_IDS.hostFirst + guestId;
}

/**
 * Moves every file under `dir` (itself included) from host ids into the guest range, keeping
 * modes: chown clears setuid/setgid bits, so the mode is set again afterwards (never on symlinks,
 * whose mode means nothing). Ids already in the range are left alone, so a half-done shift can run
 * again. Only for trees the host made (the base from debootstrap, an identity layer): a guest-made
 * tree is already in the range.
 */
export async function shiftIntoGuestRange(dir: string): Promise<void> {
  const shift = (id: number) => (id >= GUEST_IDS.hostFirst ? id : hostIdOf(id));
  const visit = async (path: string): Promise<void> => {
    const stat = await lstat(path);
    await lchown(path, shift(stat.uid), shift(stat.gid));
    if (!stat.isSymbolicLink()) await chmod(path, stat.mode & 0o7777);
    if (stat.isDirectory()) {
      for (const name of await readdir(path)) await visit(join(path, name));
    }
  };
  await visit(dir);
}
