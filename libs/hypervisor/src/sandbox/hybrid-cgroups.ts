import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../host/run-command';
import { CGROUP_ROOT, cgroupFileWords, isUnified } from './cgroup-probe';

/**
 * The hybrid cgroup layout (systemd's "hybrid" mode, and this project's hosts): the controllers
 * in cgroup v1 hierarchies under /sys/fs/cgroup, plus a cgroup2 hierarchy at `unified` that
 * tracks processes. crun 1.8 refuses to start containers there as soon as that cgroup2 hierarchy
 * offers any controller ("cgroups in hybrid mode not supported, drop all controllers from
 * cgroupv2"); here it offers hugetlb, which no group enables. A controller that no group of a
 * hierarchy uses can be bound to a v1 hierarchy of its own instead, after which crun runs.
 */
export interface HybridControllers {
  /** Controllers the hybrid layout's cgroup2 hierarchy offers (empty: not hybrid, or nothing to move). */
  offered: string[];
  /** Why they cannot be moved, when they cannot (some group there enables them). */
  blocked: string | null;
}

/** What stands between this host and crun, read only (a pure v1 or v2 host: nothing). */
export async function hybridControllers(root = CGROUP_ROOT): Promise<HybridControllers> {
  const unified = join(root, 'unified');
  if (isUnified(root) || !existsSync(join(unified, 'cgroup.controllers'))) return { offered: [], blocked: null };
  const offered = await cgroupFileWords(join(unified, 'cgroup.controllers'));
  if (offered.length === 0) return { offered, blocked: null };
  const enabled = await cgroupFileWords(join(unified, 'cgroup.subtree_control'));
  if (enabled.length > 0) {
    return { offered, blocked: `the hybrid layout's cgroup2 hierarchy (${unified}) hands ${enabled.join(', ')} down to its groups` };
  }
  return { offered, blocked: null };
}

/**
 * Binds each controller the hybrid layout's cgroup2 hierarchy offers to a cgroup v1 hierarchy of
 * its own at `<root>/<controller>`, beside the others: a host change (logged by the caller), kept
 * until reboot, harmless to what runs (no group used them). Says which it moved; throws when
 * one stays (the tmpfs at `root` is read-only, or a group took it meanwhile).
 */
export function moveHybridControllersToV1(root = CGROUP_ROOT): Promise<string[]> {
  // One move at a time in this process (drivers starting at once would mount a hierarchy twice).
  const move = (moving[root] ?? Promise.resolve([])).catch(() => []).then(() => moveControllers(root));
  moving[root] = move;
  return move;
}

const moving: Record<string, Promise<string[]>> = {};

async function moveControllers(root: string): Promise<string[]> {
  const { offered, blocked } = await hybridControllers(root);
  if (blocked) throw new Error(blocked);
  for (const controller of offered) {
    const dir = join(root, controller);
    try {
      await mkdir(dir, { recursive: true });
      await runCommand('mount', ['-t', 'cgroup', '-o', controller, 'cgroup', dir]);
    } catch (error) {
      throw new Error(`cannot give ${controller} a cgroup v1 hierarchy at ${dir}: ${(error as Error).message}`);
    }
  }
  const left = (await hybridControllers(root)).offered;
  if (left.length > 0) throw new Error(`the hybrid layout's cgroup2 hierarchy still offers ${left.join(', ')}`);
  return offered;
}
