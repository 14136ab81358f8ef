import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

const MIB = 1024 * 1024;

/** The data disk had less free space than the floor when asked. */
export interface DiskShortfall {
  free_mib: number;
  floor_mib: number;
  /** Says what is refused and why, for the client (api: 507) and the log (worker). */
  message: string;
}

/**
 * The free-space floor of the data disk (ARBOR_DATA_DISK_FLOOR_MIB): below it, new VMs, branches
 * and commits are refused (the api answers 507 before asking; the worker checks again before it
 * makes a disk or a snapshot), so machines and snapshots cannot fill the disk that also holds the
 * event log. What an unprivileged user may still write counts (statfs' available blocks).
 */
export class DataDiskFloor {
  constructor(
    readonly dir: string,
    readonly floorMib: number,
  ) {}

  /** The shortfall, or null when the disk is above the floor (or the floor is 0). */
  async check(): Promise<DiskShortfall | null> {
    if (this.floorMib <= 0) return null;
    const stats = await statfsNearest(this.dir);
    const free_mib = Math.floor((Number(stats.bavail) * Number(stats.bsize)) / MIB);
    if (free_mib >= this.floorMib) return null;
    return {
      free_mib,
      floor_mib: this.floorMib,
      message: `the data disk has ${free_mib} MiB free, below the floor of ${this.floorMib} MiB: new VMs, branches and commits are refused until space is freed`,
    };
  }
}

/** statfs of the directory, or of its nearest existing parent (a data directory not made yet is on its parent's disk). */
async function statfsNearest(dir: string): Promise<Awaited<ReturnType<typeof statfs>>> {
  for (let current = dir; ; current = dirname(current)) {
    try {
      return await statfs(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
    }
  }
}
