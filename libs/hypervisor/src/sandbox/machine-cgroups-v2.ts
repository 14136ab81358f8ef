import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CPU_PERIOD_US, MACHINE_PIDS_MAX, MachineCgroups, readCgroupFile, removeCgroupDir, type CgroupLimits } from './machine-cgroups';

/** Controllers a machine's group gets from its parent; the freezer is core cgroup v2, no controller. */
export const V2_CONTROLLERS = ['memory', 'cpu', 'pids'] as const;
type V2Controller = (typeof V2_CONTROLLERS)[number];

export interface CgroupV2Options {
  /** Where the unified hierarchy is mounted (/sys/fs/cgroup on a v2 host). */
  root: string;
  /** The group every machine's group sits in; it never holds processes of its own. */
  parent: string;
  log: (line: string) => void;
}

const words = (text: string | null) => (text ?? '').split(/\s+/).filter(Boolean);

/**
 * Makes `root/parent` and enables the machine controllers for its children: in root's
 * cgroup.subtree_control (so `parent` has them) and in parent's (so each machine has them). cgroup v2
 * hands controllers down only from groups without processes of their own ("no internal processes"):
 * `parent` never gets any, and the hierarchy's real root is exempt. Controllers the hierarchy does
 * not offer (bound to a v1 hierarchy, or not delegated to this subtree) come back as `missing`.
 */
export async function enableV2Controllers(
  root: string,
  parent: string,
): Promise<{ enabled: V2Controller[]; missing: V2Controller[]; offered: string[] }> {
  const offered = words(await readCgroupFile(join(root, 'cgroup.controllers')));
  const enabled = V2_CONTROLLERS.filter((controller) => offered.includes(controller));
  const missing = V2_CONTROLLERS.filter((controller) => !offered.includes(controller));
  const parentDir = join(root, parent);
  await mkdir(parentDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot create cgroup ${parentDir}: ${error.message}`);
  });
  for (const dir of [root, parentDir]) {
    const active = words(await readCgroupFile(join(dir, 'cgroup.subtree_control')));
    const wanted = enabled.filter((controller) => !active.includes(controller));
    if (wanted.length === 0) continue;
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
  return { enabled, missing, offered };
}

/** cgroup v2: one group `root/parent/<vm id>` in the unified hierarchy; pause through cgroup.freeze. */
export class MachineCgroupsV2 extends MachineCgroups {
  readonly version = 2;

  constructor(
    vmId: string,
    private readonly options: CgroupV2Options,
  ) {
    super(vmId);
  }

  /** A unified (v2) hierarchy is mounted at `root`; its root group alone has cgroup.controllers there. */
  static isUnified(root: string): boolean {
    return existsSync(join(root, 'cgroup.controllers'));
  }

  private get dir(): string {
    return join(this.options.root, this.options.parent, this.vmId);
  }

  procsFiles(): string[] {
    return [join(this.dir, 'cgroup.procs')];
  }

  async create(limits: CgroupLimits): Promise<void> {
    const { enabled, missing, offered } = await enableV2Controllers(this.options.root, this.options.parent);
    await mkdir(this.dir, { recursive: true });
    const write = (file: string, value: string) => writeFile(join(this.dir, file), value);
    if (enabled.includes('memory')) {
      await write('memory.max', String(limits.memMib * 1024 * 1024));
      // Present only with swap accounting; without it a v1-style limit would just spill into swap.
      if (existsSync(join(this.dir, 'memory.swap.max'))) await write('memory.swap.max', '0');
    }
    if (enabled.includes('cpu')) await write('cpu.max', `${limits.vcpus * CPU_PERIOD_US} ${CPU_PERIOD_US}`);
    if (enabled.includes('pids')) await write('pids.max', String(MACHINE_PIDS_MAX));
    if (missing.length > 0) {
      this.options.log(
        `sandbox: machine ${this.vmId} runs without ${missing.join(', ')} limits: the cgroup v2 hierarchy at ` +
          `${this.options.root} does not offer ${missing.length > 1 ? 'those controllers' : 'that controller'} ` +
          `(cgroup.controllers: "${offered.join(' ')}"; bound to a cgroup v1 hierarchy, or not delegated)`,
      );
    }
  }

  async isFrozen(): Promise<boolean | null> {
    const freeze = await readCgroupFile(join(this.dir, 'cgroup.freeze'));
    return freeze === null ? null : freeze === '1';
  }

  protected async requestFrozen(frozen: boolean): Promise<void> {
    await writeFile(join(this.dir, 'cgroup.freeze'), frozen ? '1' : '0');
  }

  /** cgroup.events says `frozen 1` once every task in the group has stopped. */
  protected async reachedFrozen(frozen: boolean): Promise<boolean> {
    const events = await readCgroupFile(join(this.dir, 'cgroup.events'));
    return new RegExp(`^frozen ${frozen ? 1 : 0}$`, 'm').test(events ?? '');
  }

  /** cgroup.kill (Linux 5.14+) kills the whole group at once, frozen or not, with no pid-reuse race. */
  override async killAll(): Promise<void> {
    const kill = join(this.dir, 'cgroup.kill');
    if (existsSync(kill)) await writeFile(kill, '1').catch(() => undefined);
    await super.killAll();
  }

  async remove(): Promise<void> {
    await removeCgroupDir(this.dir);
  }
}
