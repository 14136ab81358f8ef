import { existsSync } from 'node:fs';
import { readFile, rmdir } from 'node:fs/promises';
import { killQuietly } from '../host/kill-process';
import { sleep } from '../host/sleep';

export interface CgroupLimits {
  memMib: number;
  vcpus: number;
}

/** cpu quota period: a machine with n vCPUs may use n periods of CPU time per period. */
export const CPU_PERIOD_US = 100_000;

/** Fork-bomb ceiling per machine: far above what a dev machine runs, far below the host's pid_max. */
export const MACHINE_PIDS_MAX = 16_384;

/**
 * One machine's cgroups: resource limits, membership of all its processes, and the freezer. The
 * driver sees only this; cgroup v1 (one group per controller hierarchy) and v2 (one group in the
 * unified hierarchy) differ only in which files they write. See machineCgroups() for the choice.
 */
export abstract class MachineCgroups {
  abstract readonly version: 1 | 2;

  constructor(protected readonly vmId: string) {}

  /** Creates the machine's group(s) and writes its limits; no process is in them yet. */
  abstract create(limits: CgroupLimits): Promise<void>;

  /** The cgroup.procs files a process must be written into to belong to the machine. */
  abstract procsFiles(): string[];

  /** Whether the machine is (being) frozen; null when it has no cgroup (destroyed or never made). */
  abstract isFrozen(): Promise<boolean | null>;

  /** Removes the machine's group(s); call killAll() first, a populated group cannot go. */
  abstract remove(): Promise<void>;

  /** Asks the kernel to freeze or thaw. */
  protected abstract requestFrozen(frozen: boolean): Promise<void>;

  /** Whether the kernel reports the freeze or thaw done (freezing every task is not instant). */
  protected abstract reachedFrozen(frozen: boolean): Promise<boolean>;

  /** Freezes or thaws and waits until the kernel reports it reached. */
  async setFrozen(frozen: boolean): Promise<void> {
    for (let attempt = 0; attempt < 500; attempt++) {
      await this.requestFrozen(frozen);
      if (await this.reachedFrozen(frozen)) return;
      await sleep(10);
    }
    throw new Error(`cgroup v${this.version} freezer of ${this.vmId} did not ${frozen ? 'freeze' : 'thaw'}`);
  }

  /**
   * Kills every process still in the machine's cgroups (e.g. an exec on its way in) and waits
   * until they are gone. A v1-frozen process acts on SIGKILL only once thawed: thaw first.
   */
  async killAll(): Promise<void> {
    for (let round = 0; round < 50; round++) {
      const pids = await this.memberPids();
      if (pids.length === 0) return;
      for (const pid of pids) killQuietly(pid);
      await sleep(20);
    }
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
}

/** Removes a cgroup directory; the kernel refuses while processes remain, so retry briefly. */
export async function removeCgroupDir(dir: string): Promise<void> {
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

/** Reads a cgroup file, or null when it does not exist (the group is gone, or the kernel lacks it). */
export function readCgroupFile(path: string): Promise<string | null> {
  return readFile(path, 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
}
