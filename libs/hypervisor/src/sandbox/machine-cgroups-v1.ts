import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CPU_PERIOD_US, MACHINE_PIDS_MAX, MachineCgroups, readCgroupFile, removeCgroupDir, type CgroupLimits } from './machine-cgroups';

/** cgroup v1 controllers a machine gets its own group in, each under <controller>/arbor/<vm id>. */
export const V1_CONTROLLERS = ['freezer', 'memory', 'cpu', 'pids'] as const;

/** cgroup v1: one group per controller hierarchy; pause through the freezer controller. */
export class MachineCgroupsV1 extends MachineCgroups {
  readonly version = 1;

  constructor(
    vmId: string,
    private readonly root: string,
    /** The group machines' groups sit in, in every controller hierarchy. */
    private readonly parent: string,
  ) {
    super(vmId);
  }

  /** The controller hierarchies the machines need but are not mounted under `root`. */
  static missingControllers(root: string): string[] {
    return V1_CONTROLLERS.filter((controller) => !existsSync(join(root, controller, 'cgroup.procs')));
  }

  private dir(controller: (typeof V1_CONTROLLERS)[number]): string {
    return join(this.root, controller, this.parent, this.vmId);
  }

  procsFiles(): string[] {
    return V1_CONTROLLERS.map((controller) => join(this.dir(controller), 'cgroup.procs'));
  }

  async create(limits: CgroupLimits): Promise<void> {
    for (const controller of V1_CONTROLLERS) await mkdir(this.dir(controller), { recursive: true });
    await writeFile(join(this.dir('memory'), 'memory.limit_in_bytes'), String(limits.memMib * 1024 * 1024));
    // Memory + swap to the same figure, so swap cannot stretch the limit (the file exists only
    // where the kernel accounts swap), as memory.swap.max 0 does on v2.
    const memsw = join(this.dir('memory'), 'memory.memsw.limit_in_bytes');
    if (existsSync(memsw)) await writeFile(memsw, String(limits.memMib * 1024 * 1024));
    await writeFile(join(this.dir('cpu'), 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
    await writeFile(join(this.dir('cpu'), 'cpu.cfs_quota_us'), String(limits.vcpus * CPU_PERIOD_US));
    await writeFile(join(this.dir('pids'), 'pids.max'), String(MACHINE_PIDS_MAX));
  }

  /** FREEZING (on its way) counts as not frozen, as before: only FROZEN is a paused machine. */
  async isFrozen(): Promise<boolean | null> {
    const state = await this.freezerState();
    return state === null ? null : state === 'FROZEN';
  }

  protected async requestFrozen(frozen: boolean): Promise<void> {
    await writeFile(join(this.dir('freezer'), 'freezer.state'), frozen ? 'FROZEN' : 'THAWED');
  }

  protected async reachedFrozen(frozen: boolean): Promise<boolean> {
    return (await this.freezerState()) === (frozen ? 'FROZEN' : 'THAWED');
  }

  private freezerState(): Promise<string | null> {
    return readCgroupFile(join(this.dir('freezer'), 'freezer.state'));
  }

  async remove(): Promise<void> {
    for (const controller of V1_CONTROLLERS) await removeCgroupDir(this.dir(controller));
  }
}
