import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { unmountAllUnder } from '../host/host-mounts';
import { ensurePrivateDirectory } from '../host/private-directory';
import { isSafeId } from '../host/safe-id';
import { sleep } from '../host/sleep';
import { createMachineDisk, diskDeviceOf, releaseMachineDisk } from './machine-disk';
import { MachineLayout } from './machine-layout';

export interface DiskPoolOptions {
  /** Spare disks kept formatted and mounted (0: none). */
  size: number;
  /** Their size until a machine asks for another (then the pool follows it). */
  sizeMib: number;
}

/** Spare disks formatted at once: mkfs is short, and the pool refills only when the driver is quiet. */
const FILL_CONCURRENCY = 1;
/** As the warm pool: formatting competes with a burst for the CPU, so it waits for a quiet moment. */
const REFILL_AFTER_QUIET_MS = 500;

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
 * Crash safety: spares are never adopted. Whatever a start finds in `.disks` is unmounted, its
 * loop device released and its files removed; a machine whose claim a crash cut before its record
 * was written is a directory with a disk and no record, which the driver tears down like any dead
 * machine.
 */
export class DiskPool {
  private readonly waiting: string[] = [];
  private sizeMib: number;
  private formatting = 0;
  private failures = 0;
  private stopped = true;
  private readonly full: (() => void)[] = [];
  private readonly settled = new Set<Promise<void>>();
  private refill: NodeJS.Timeout | null = null;

  constructor(
    private readonly dir: string,
    private readonly options: DiskPoolOptions,
    private readonly log: (line: string) => void,
  ) {
    this.sizeMib = options.sizeMib;
  }

  /** Removes what an earlier run left in the pool's directory, then starts filling (if it has a size). */
  async start(): Promise<void> {
    if (this.options.size === 0) return;
    await ensurePrivateDirectory(this.dir);
    await this.destroyLeftovers();
    this.stopped = false;
    this.fill();
  }

  /** Removes every spare in the pool's directory that this pool is not keeping (all of them, once stopped). */
  async destroyLeftovers(): Promise<void> {
    const ids = (await readdir(this.dir).catch(() => [] as string[])).filter((id) => isSafeId(id) && !this.waiting.includes(id));
    for (const id of ids) await this.destroy(id).catch((error: Error) => this.log(`sandbox: removing spare disk ${id} failed: ${error.message}`));
  }

  /** Stops filling and removes every spare (a claimed one is a machine's, and stays). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.refill) clearTimeout(this.refill);
    await Promise.allSettled([...this.settled]);
    for (const id of this.waiting.splice(0)) await this.destroy(id).catch(() => undefined);
  }

  /** Resolves once the pool holds its size of spares (benchmarks and tests wait for it). */
  whenFull(): Promise<void> {
    if (this.waiting.length >= this.options.size) return Promise.resolve();
    return new Promise((resolve) => this.full.push(resolve));
  }

  /** How many spares wait (tests). */
  get spares(): number {
    return this.waiting.length;
  }

  /**
   * Moves a spare of `sizeMib` into `machineDir`, an empty directory the caller claimed (MachineDirectory.claim):
   * true, its disk is there, mounted; false when none fits (another size: the pool turns to it;
   * or none waiting), the caller makes the disk.
   */
  async claimInto(machineDir: string, sizeMib: number): Promise<boolean> {
    if (this.stopped || this.options.size === 0) return false;
    if (sizeMib !== this.sizeMib) {
      this.resize(sizeMib);
      return false;
    }
    const id = this.waiting.shift();
    this.refillWhenQuiet();
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

  /** The driver is busy with a machine: a refill waits until it has been quiet a while. */
  busy(): void {
    if (this.refill || this.waiting.length + this.formatting < this.options.size) this.refillWhenQuiet();
  }

  /** Machines of another disk size: the pool follows them (its spares of the old size go). */
  private resize(sizeMib: number): void {
    this.sizeMib = sizeMib;
    const old = this.waiting.splice(0);
    this.track((async () => {
      for (const id of old) await this.destroy(id).catch(() => undefined);
    })());
    this.refillWhenQuiet();
  }

  private refillWhenQuiet(): void {
    if (this.stopped) return;
    if (this.refill) clearTimeout(this.refill);
    this.refill = setTimeout(() => {
      this.refill = null;
      this.fill();
    }, REFILL_AFTER_QUIET_MS);
  }

  private fill(): void {
    while (!this.stopped && this.formatting < FILL_CONCURRENCY && this.waiting.length + this.formatting < this.options.size) {
      this.formatting++;
      this.track(this.formatOne().finally(() => {
        this.formatting--;
        this.fill();
      }));
    }
  }

  private async formatOne(): Promise<void> {
    // After failures, wait a little more each time (a host out of loop devices stays so for a while).
    if (this.failures > 0) await sleep(Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6)));
    if (this.stopped) return;
    const sizeMib = this.sizeMib;
    const id = randomUUID();
    const spare = new MachineLayout(this.dir, id);
    try {
      await spare.claim();
      await ensurePrivateDirectory(spare.dir);
      await createMachineDisk(spare.diskImage, spare.disk, sizeMib);
    } catch (error) {
      this.failures++;
      this.log(`sandbox: formatting a spare disk failed (the pool tries again): ${(error as Error).message}`);
      await this.destroy(id).catch(() => undefined);
      return;
    }
    this.failures = 0;
    if (this.stopped || sizeMib !== this.sizeMib) {
      await this.destroy(id).catch(() => undefined);
      return;
    }
    this.waiting.push(id);
    if (this.waiting.length >= this.options.size) this.full.splice(0).forEach((resolve) => resolve());
  }

  /** Unmounts the spare's disk, waits for its loop device to go, removes its files. */
  private async destroy(id: string): Promise<void> {
    const spare = new MachineLayout(this.dir, id);
    const device = await diskDeviceOf(spare.disk);
    await unmountAllUnder(spare.dir);
    if (existsSync(spare.diskImage)) await releaseMachineDisk(spare.diskImage, device);
    await rm(spare.dir, { recursive: true, force: true });
  }

  private track(work: Promise<void>): void {
    this.settled.add(work);
    void work.finally(() => this.settled.delete(work));
  }
}
