import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MACHINES_CGROUP } from './container-config';

export const CGROUP_ROOT = '/sys/fs/cgroup';

/**
 * What every machine's limits need: memory, cpu and pids limits, the freezer for pause and (on v1)
 * the devices controller for the device allow-list; cgroup v2 has the freezer and device control
 * in its core (cgroup.freeze, eBPF).
 */
const V1_CONTROLLERS = ['memory', 'cpu', 'pids', 'freezer', 'devices'];
const V2_CONTROLLERS = ['memory', 'cpu', 'pids'];

export interface CgroupProbe {
  ok: boolean;
  version: 1 | 2 | null;
  /** Which version is in use and why machines can or cannot get their limits on it. */
  reason: string;
  /** Whether the kernel accounts swap, so a machine's swap can be limited too. */
  swapAccounted: boolean;
}

/** A unified (v2) hierarchy is mounted at `root`; its root group alone has cgroup.controllers there. */
export function isUnified(root = CGROUP_ROOT): boolean {
  return existsSync(join(root, 'cgroup.controllers'));
}

/** The words of a cgroup file (controller lists), none when it cannot be read. */
export const cgroupFileWords = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split(/\s+/).filter(Boolean);

/**
 * Whether the runtime can give machines every limit here. It fails closed: a controller the
 * limits need that the hierarchy lacks makes the probe fail with its name, rather than machines
 * running unlimited. On v2 it does what the runtime will do (the `arbor` group and its
 * controllers), since a read-only or namespaced hierarchy only shows itself when written to.
 */
export async function probeCgroups(root = CGROUP_ROOT): Promise<CgroupProbe> {
  if (isUnified(root)) {
    const offered = await cgroupFileWords(join(root, 'cgroup.controllers'));
    const missing = V2_CONTROLLERS.filter((controller) => !offered.includes(controller));
    if (missing.length > 0) {
      return {
        ok: false,
        version: 2,
        swapAccounted: false,
        reason:
          `cgroup v2 at ${root} does not offer ${missing.join(', ')} (cgroup.controllers: "${offered.join(' ')}"; ` +
          'bound to a cgroup v1 hierarchy, or not delegated): machines would run without those limits',
      };
    }
    const parent = join(root, MACHINES_CGROUP);
    try {
      await mkdir(parent, { recursive: true });
      for (const dir of [root, parent]) await enableControllers(dir);
    } catch (error) {
      return { ok: false, version: 2, swapAccounted: false, reason: `cgroup v2 at ${root}: ${(error as Error).message}` };
    }
    if (!existsSync(join(parent, 'cgroup.freeze'))) {
      return { ok: false, version: 2, swapAccounted: false, reason: `cgroup v2 at ${root} has no cgroup.freeze (Linux 5.2+): machines could not be paused` };
    }
    const swapAccounted = existsSync(join(parent, 'memory.swap.max'));
    return { ok: true, version: 2, swapAccounted, reason: `cgroup v2 (unified hierarchy at ${root}): memory/cpu/pids limits, devices, freezer` };
  }
  const missing = V1_CONTROLLERS.filter((controller) => !existsSync(join(root, controller, 'cgroup.procs')));
  if (missing.length > 0) {
    return {
      ok: false,
      version: null,
      swapAccounted: false,
      reason:
        `no usable cgroups at ${root}: not a cgroup v2 unified hierarchy (no cgroup.controllers), ` +
        `and the cgroup v1 ${missing.join('/')} hierarchies are not mounted: machines would run without those limits`,
    };
  }
  const swapAccounted = existsSync(join(root, 'memory', 'memory.memsw.limit_in_bytes'));
  return { ok: true, version: 1, swapAccounted, reason: `cgroup v1 (${V1_CONTROLLERS.join('/')} hierarchies under ${root})` };
}

/** Hands the machine controllers down from `dir` to its children (v2 "no internal processes" permitting). */
async function enableControllers(dir: string): Promise<void> {
  const active = await cgroupFileWords(join(dir, 'cgroup.subtree_control'));
  const wanted = V2_CONTROLLERS.filter((controller) => !active.includes(controller));
  if (wanted.length === 0) return;
  await writeFile(join(dir, 'cgroup.subtree_control'), wanted.map((controller) => `+${controller}`).join(' ')).catch(
    (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EBUSY'
          ? ` (processes live directly in ${dir}, and cgroup v2 hands controllers down only from groups without` +
            ' processes of their own; in a container, move its processes into a child cgroup first)'
          : '';
      throw new Error(`cannot enable ${wanted.join(', ')} for the child cgroups of ${dir}: ${error.message}${why}`);
    },
  );
}
