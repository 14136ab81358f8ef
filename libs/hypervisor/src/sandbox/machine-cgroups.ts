import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** cgroup v1 controllers a machine gets its own group in (this host has no usable cgroup2). */
const CONTROLLERS = ['freezer', 'memory', 'cpu', 'pids'] as const;
const CPU_PERIOD_US = 100_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One machine's cgroups: resource limits, membership of all its processes, and the freezer. */
export class MachineCgroups {
  constructor(private readonly vmId: string) {}

  static isSupported(): boolean {
    return CONTROLLERS.every((controller) => existsSync(join(CGROUP_ROOT, controller, 'cgroup.procs')));
  }

  private dir(controller: (typeof CONTROLLERS)[number]): string {
    return join(CGROUP_ROOT, controller, 'arbor', this.vmId);
  }

  /** The cgroup.procs files a process must be written into to belong to the machine. */
  procsFiles(): string[] {
    return CONTROLLERS.map((controller) => join(this.dir(controller), 'cgroup.procs'));
  }

  async create(limits: { memMib: number; vcpus: number }): Promise<void> {
    for (const controller of CONTROLLERS) await mkdir(this.dir(controller), { recursive: true });
    await writeFile(join(this.dir('memory'), 'memory.limit_in_bytes'), String(limits.memMib * 1024 * 1024));
    await writeFile(join(this.dir('cpu'), 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
    await writeFile(join(this.dir('cpu'), 'cpu.cfs_quota_us'), String(limits.vcpus * CPU_PERIOD_US));
  }

  async freezerState(): Promise<string | null> {
    return readFile(join(this.dir('freezer'), 'freezer.state'), 'utf8').then(
      (state) => state.trim(),
      () => null,
    );
  }

  /** Writes the freezer state and waits until the kernel reports it reached (FREEZING is transient). */
  async setFrozen(frozen: boolean): Promise<void> {
    const wanted = frozen ? 'FROZEN' : 'THAWED';
    for (let attempt = 0; attempt < 500; attempt++) {
      await writeFile(join(this.dir('freezer'), 'freezer.state'), wanted);
      if ((await this.freezerState()) === wanted) return;
      await sleep(10);
    }
    throw new Error(`cgroup freezer of ${this.vmId} did not reach ${wanted}`);
  }

  /** Host PIDs of every process still in the machine's cgroups. */
  async memberPids(): Promise<number[]> {
    const pids = new Set<number>();
    for (const file of this.procsFiles()) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split('\n')) if (line.trim()) pids.add(Number(line));
    }
    return [...pids];
  }

  /** Removes the groups; the kernel refuses while processes remain, so retry briefly. */
  async remove(): Promise<void> {
    for (const controller of CONTROLLERS) {
      const dir = this.dir(controller);
      for (let attempt = 0; existsSync(dir); attempt++) {
        try {
          await rmdir(dir);
        } catch (error: any) {
          if (error.code === 'ENOENT') break;
          if (attempt >= 100) throw new Error(`cannot remove cgroup ${dir}: ${error.message}`);
          await sleep(20);
        }
      }
    }
  }
}
