import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { unmountAllUnder } from '../host/host-mounts';
import { createMachineDisk, diskDeviceOf, releaseMachineDisk } from './machine-disk';
import type { MachineLayout } from './machine-layout';
import { ReadyPool } from './ready-pool';

export interface DiskPoolOptions {
  /** Spare disks kept formatted and mounted (0: none). */
  size: number;
  /** Their size until a machine asks for another (then the pool follows it). */
  sizeMib: number;
}

/** Spare disks formatted at once: mkfs is short, and the pool refills only when the driver is quiet. */
const FILL_CONCURRENCY = 1;

/**
 * Machine disks made ahead (machine-disk.ts: a sparse image, formatted btrfs, loop-mounted), so a
 * machine booted cold (a branch child, a create no warm machine serves) takes one instead of
 * running mkfs, losetup and mount on its way up (~40 ms at load 2, ~90 ms at load 5).
 *
 * A spare lives in `<stateDir>/.disks/<id>/` laid out as a machine directory (`disk.img`, `disk/`
 * mounted), where the driver's list never looks. A machine claims one by renaming that directory
 * onto its own, still empty, claimed directory (one rename: the mount moves with its parent),
 * before its record is written. A spare is empty and never used before (each is claimed at most
 * once), of exactly the size the machine asks for: the disk is the machine's own, with its quota.
 *
 * Crash safety: spares are never adopted (ReadyPool). Whatever a start finds in `.disks` is
 * unmounted, its loop device released and its files removed; a machine whose claim a crash cut
 * before its record was written is a directory with a disk and no record, which the driver tears
 * down like any dead machine.
 */
export class DiskPool extends ReadyPool<number> {
  constructor(dir: string, options: DiskPoolOptions, log: (line: string) => void) {
    super(dir, { noun: 'spare disk', size: options.size, kind: options.sizeMib, concurrency: FILL_CONCURRENCY }, log);
  }

  protected build(spare: MachineLayout, sizeMib: number): Promise<void> {
    return createMachineDisk(spare.diskImage, spare.disk, sizeMib);
  }

  /** Unmounts the spare's disk, waits for its loop device to go, removes its files. */
  protected async tearDown(spare: MachineLayout): Promise<void> {
    const device = await diskDeviceOf(spare.disk);
    await unmountAllUnder(spare.dir);
    if (existsSync(spare.diskImage)) await releaseMachineDisk(spare.diskImage, device);
    await rm(spare.dir, { recursive: true, force: true });
  }

  /**
   * Moves a spare of `sizeMib` into `machineDir`, an empty directory the caller claimed (MachineDirectory.claim):
   * true, its disk is there, mounted; false when none fits (another size: the pool turns to it;
   * or none waiting), the caller makes the disk.
   */
  async claimInto(machineDir: string, sizeMib: number): Promise<boolean> {
    if (this.off) return false;
    if (sizeMib !== this.kind) {
      this.follow(sizeMib);
      return false;
    }
    const id = this.take();
    if (!id) return false;
    try {
      await rename(join(this.dir, id), machineDir);
      return true;
    } catch (error) {
      this.log(`sandbox: claiming spare disk ${id} failed, formatting one: ${(error as Error).message}`);
      await this.destroy(id).catch(() => undefined);
      return false;
    }
  }
}
