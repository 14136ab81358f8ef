import { readFile } from 'node:fs/promises';
import { runCommand } from '../host/run-command';

/**
 * Every runtime exec and start moves a process into the machine's cgroups (a write to
 * `cgroup.procs` of each hierarchy), and the kernel makes each such move under one host-wide
 * lock (cgroup_threadgroup_rwsem). In its default mode that lock favours forks and exits: the
 * first move after a quiet spell waits out an RCU grace period, 10–13 ms on this project's hosts,
 * where a move in a busy spell takes 0.1 ms. So an exec into an idle machine paid ~12 ms more
 * than the same exec a moment after another (a `crun exec` 22 ms against 9 ms).
 *
 * `favordynmods`, an option of the cgroup2 hierarchy (Linux ≥ 6.0), keeps the lock in the movers'
 * mode for good, at a small cost to each fork and exit on the host: what a host that starts and
 * enters containers all day wants. The lock is host-wide, so the option set on the cgroup2
 * hierarchy serves the v1 hierarchies of a hybrid layout as well.
 */
export const FAVOR_DYNMODS = 'favordynmods';

export interface Cgroup2Mount {
  path: string;
  /** The mount's own options (rw, nosuid, relatime …). */
  mountOptions: string[];
  /** The hierarchy's options (nsdelegate, memory_recursiveprot …). */
  superOptions: string[];
}

/** The cgroup2 hierarchy's mount in `/proc/self/mountinfo` text (the first, if mounted twice), or null on a host without one. */
export function cgroup2Mount(mountinfo: string): Cgroup2Mount | null {
  for (const line of mountinfo.split('\n')) {
    // <id> <parent> <dev> <root> <mount point> <mount options> [optional fields…] - <fs type> <source> <super options>
    const [mine, theirs] = line.split(' - ');
    if (!theirs) continue;
    const [fsType, , superOptions = ''] = theirs.split(' ');
    if (fsType !== 'cgroup2') continue;
    const fields = mine.split(' ');
    return { path: unescapeMountPath(fields[4]), mountOptions: fields[5].split(','), superOptions: superOptions.split(',') };
  }
  return null;
}

/**
 * The options of a remount that adds favordynmods and keeps everything else: a cgroup2 remount
 * clears each hierarchy option it is not given (nsdelegate, memory_recursiveprot on a systemd host).
 */
export function favorDynmodsRemountOptions(mount: Cgroup2Mount): string {
  return [...new Set(['remount', ...mount.mountOptions, ...mount.superOptions, FAVOR_DYNMODS])].join(',');
}

/**
 * Sets favordynmods on the host's cgroup2 hierarchy if it is not set (a host change, kept until
 * reboot; the caller logs it). Says what it did: null when there was nothing to do (set already,
 * or no cgroup2 hierarchy); throws when the kernel refuses it or the option did not take.
 */
export async function favorCgroupMoves(mountinfoPath = '/proc/self/mountinfo'): Promise<string | null> {
  const mount = cgroup2Mount(await readFile(mountinfoPath, 'utf8'));
  if (!mount || mount.superOptions.includes(FAVOR_DYNMODS)) return null;
  // The options exactly as given: mount(8) would otherwise merge in what fstab or mtab say.
  await runCommand('mount', ['--options-source', 'disable', '-o', favorDynmodsRemountOptions(mount), mount.path]);
  const after = cgroup2Mount(await readFile(mountinfoPath, 'utf8'));
  if (!after?.superOptions.includes(FAVOR_DYNMODS)) throw new Error(`the kernel did not take ${FAVOR_DYNMODS} on ${mount.path}`);
  return `${FAVOR_DYNMODS} on ${mount.path}: entering a machine's cgroups no longer waits for an RCU grace period after a quiet spell`;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
