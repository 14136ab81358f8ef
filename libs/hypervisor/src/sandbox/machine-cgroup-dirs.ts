import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killQuietly } from '../host/kill-process';
import { sleep } from '../host/sleep';
import { CGROUP_ROOT, isUnified } from './cgroup-probe';
import { MACHINES_CGROUP } from './container-config';

/**
 * The machine's cgroup directories, wherever the runtime makes them: `arbor/<vm>` in the unified
 * hierarchy, or in every v1 hierarchy. The runtime creates and removes them; the driver only
 * looks (status checks in tests) and sweeps what a crash left (see removeLeftoverCgroups).
 */
export function machineCgroupDirs(vmId: string, root = CGROUP_ROOT): string[] {
  if (isUnified(root)) return [join(root, MACHINES_CGROUP, vmId)];
  const hierarchies = readdirSync(root).filter((name) => existsSync(join(root, name, 'cgroup.procs')));
  return hierarchies.map((name) => join(root, name, MACHINES_CGROUP, vmId));
}

/**
 * Whether the runtime has the machine frozen (what `runc state` reports as paused, read from the
 * same cgroup file for a fraction of its cost); null when the machine has no cgroup. A v1 freezer
 * on its way (FREEZING) is not frozen yet.
 */
export async function isMachineFrozen(vmId: string, root = CGROUP_ROOT): Promise<boolean | null> {
  const [file, frozen] = isUnified(root)
    ? [join(root, MACHINES_CGROUP, vmId, 'cgroup.freeze'), '1']
    : [join(root, 'freezer', MACHINES_CGROUP, vmId, 'freezer.state'), 'FROZEN'];
  // Synchronous, like a process's stat: a cgroup file answers at once, the thread pool may not.
  let state: string;
  try {
    state = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  return state.trim() === frozen;
}

/**
 * Thaws the machine's freezer directly (no runtime call), so that its processes act on SIGKILL:
 * a v1-frozen process does not until thawed. Nothing to do when it has no cgroup.
 */
export async function thawMachine(vmId: string, root = CGROUP_ROOT): Promise<void> {
  const [freezer, thawed] = isUnified(root)
    ? [join(root, MACHINES_CGROUP, vmId, 'cgroup.freeze'), '0']
    : [join(root, 'freezer', MACHINES_CGROUP, vmId, 'freezer.state'), 'THAWED'];
  if (existsSync(freezer)) await writeFile(freezer, thawed).catch(() => undefined);
}

/** Host PIDs of every process in the machine's cgroups. */
export async function machineCgroupPids(vmId: string, root = CGROUP_ROOT): Promise<number[]> {
  const pids = new Set<number>();
  for (const dir of machineCgroupDirs(vmId, root)) {
    const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const line of text.split('\n')) if (line.trim()) pids.add(Number(line));
  }
  return [...pids];
}

/**
 * Kills everything in the machine's cgroups and removes them: how the driver destroys a machine
 * (what `runc delete --force` does, without a runtime process), and what sweeps the groups of a
 * container the runtime no longer knows (a crash between its steps). The kernel refuses to
 * remove a group while processes remain, so they go first, then the groups, retried briefly. A
 * frozen group is thawed first, or (v1) its processes could not act on SIGKILL.
 */
export async function removeLeftoverCgroups(vmId: string, root = CGROUP_ROOT): Promise<void> {
  await thawMachine(vmId, root);
  // Short waits: the kernel takes a few milliseconds to end a machine's processes.
  for (let round = 0; round < 200; round++) {
    const pids = await machineCgroupPids(vmId, root);
    if (pids.length === 0) break;
    for (const pid of pids) killQuietly(pid);
    await sleep(5);
  }
  for (const dir of machineCgroupDirs(vmId, root)) {
    for (let attempt = 0; existsSync(dir); attempt++) {
      try {
        await rmdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
        if (attempt >= 400) throw new Error(`cannot remove cgroup ${dir}: ${(error as Error).message}`);
        await sleep(5);
      }
    }
  }
}
