import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MachineCgroups } from './machine-cgroups';
import { MachineCgroupsV1 } from './machine-cgroups-v1';
import { enableV2Controllers, MachineCgroupsV2 } from './machine-cgroups-v2';

export const CGROUP_ROOT = '/sys/fs/cgroup';
const MACHINES_PARENT = 'arbor';

export interface CgroupsOptions {
  root?: string;
  log?: (line: string) => void;
}

/**
 * Machines' cgroups in the host's hierarchy, decided once (it does not change while the host
 * runs): v2 when `root` is a unified hierarchy (stock Debian 12 with systemd), else v1 (also
 * systemd's hybrid layout, where the controllers sit in v1).
 */
export function cgroupHierarchy(options: CgroupsOptions = {}): (vmId: string) => MachineCgroups {
  const root = options.root ?? CGROUP_ROOT;
  const log = options.log ?? (() => undefined);
  return MachineCgroupsV2.isUnified(root)
    ? (vmId) => new MachineCgroupsV2(vmId, { root, parent: MACHINES_PARENT, log })
    : (vmId) => new MachineCgroupsV1(vmId, root, MACHINES_PARENT);
}

/** One machine's cgroups in the host's hierarchy (see cgroupHierarchy). */
export function machineCgroups(vmId: string, options: CgroupsOptions = {}): MachineCgroups {
  return cgroupHierarchy(options)(vmId);
}

export interface CgroupProbe {
  ok: boolean;
  version: 1 | 2 | null;
  /** Which version is in use and why the sandbox can or cannot run on it. */
  reason: string;
}

/**
 * Whether machines can get cgroups here. On v2 it tries what create() does (the `arbor` parent and
 * its controllers), since a read-only or namespaced hierarchy only shows itself when written to.
 */
export async function probeCgroups(root = CGROUP_ROOT): Promise<CgroupProbe> {
  if (MachineCgroupsV2.isUnified(root)) {
    let missing: string[];
    try {
      ({ missing } = await enableV2Controllers(root, MACHINES_PARENT));
    } catch (error: any) {
      return { ok: false, version: 2, reason: `cgroup v2 at ${root}: ${error.message}` };
    }
    if (!existsSync(join(root, MACHINES_PARENT, 'cgroup.freeze'))) {
      return { ok: false, version: 2, reason: `cgroup v2 at ${root} has no cgroup.freeze (Linux 5.2+): machines could not be paused` };
    }
    const limits = missing.length === 0 ? 'memory/cpu/pids limits' : `NO ${missing.join('/')} limits (not offered by the hierarchy)`;
    return { ok: true, version: 2, reason: `cgroup v2 (unified hierarchy at ${root}): ${limits}, cgroup.freeze for pause` };
  }
  const missing = MachineCgroupsV1.missingControllers(root);
  if (missing.length > 0) {
    return {
      ok: false,
      version: null,
      reason:
        `no usable cgroups at ${root}: not a cgroup v2 unified hierarchy (no cgroup.controllers), ` +
        `and the cgroup v1 ${missing.join('/')} hierarchies are not mounted`,
    };
  }
  return { ok: true, version: 1, reason: `cgroup v1 (freezer/memory/cpu/pids hierarchies under ${root})` };
}
