import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { isSafeId } from '../host/safe-id';
import { containerOf, MachineLayout } from './machine-layout';

/** Dead machines taken down at once: the rest wait (a teardown is the kernel's work: cgroups, btrfs unmounts, loop devices). */
const REAP_CONCURRENCY = 2;

/**
 * Takes down what stopped machines leave on the host, behind their destroy: a destroy kills the
 * machine (no process of it runs), releases its network (nothing reaches it) and renames its
 * directory into `<state dir>/.reap/<vm_id>` (no list or status sees it, and no name of it is
 * left for a VM), then returns; the reaper then removes its cgroups, runc's state, its mounts, its
 * loop device and its files, a few machines at a time. What a crash interrupts is found in the
 * reap directory by the next start and finished. `idle()` waits for it all (a driver's close,
 * tests that look at the host).
 */
export class MachineReaper {
  private readonly queue: MachineLayout[] = [];
  /** Machines queued or being taken down: each once. */
  private readonly held = new Set<string>();
  private running = 0;
  private readonly idlers: (() => void)[] = [];

  constructor(
    readonly dir: string,
    private readonly takeDown: (layout: MachineLayout) => Promise<void>,
    private readonly log: (line: string) => void,
  ) {}

  /** Queues what is in the reap directory and not yet queued (what an earlier run, or another process, left). */
  async start(): Promise<void> {
    for (const vmId of (await readdir(this.dir).catch(() => [] as string[])).filter(isSafeId)) {
      const record = await new MachineLayout(this.dir, vmId).readRecord().catch(() => null);
      this.enqueue(new MachineLayout(this.dir, vmId, containerOf(record, vmId)));
    }
  }

  /**
   * Moves the stopped machine's directory into the reap directory and queues its teardown.
   * Returns false (nothing moved) when a directory of that name is already there being reaped: the
   * caller then takes it down itself.
   */
  async take(layout: MachineLayout): Promise<boolean> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    try {
      await rename(layout.dir, join(this.dir, layout.vmId));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
      throw error;
    }
    this.enqueue(new MachineLayout(this.dir, layout.vmId, layout.container));
    return true;
  }

  /** Resolves once nothing is queued or being taken down. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idlers.push(resolve));
  }

  private enqueue(layout: MachineLayout): void {
    if (this.held.has(layout.vmId)) return;
    this.held.add(layout.vmId);
    this.queue.push(layout);
    this.next();
  }

  private next(): void {
    while (this.running < REAP_CONCURRENCY && this.queue.length > 0) {
      const layout = this.queue.shift()!;
      this.running++;
      void this.takeDown(layout)
        .catch((error: Error) => this.log(`sandbox: taking down stopped machine ${layout.vmId} failed (the next start tries again): ${error.message}`))
        .finally(() => {
          this.held.delete(layout.vmId);
          this.running--;
          this.next();
          if (this.queue.length === 0 && this.running === 0) this.idlers.splice(0).forEach((resolve) => resolve());
        });
    }
  }
}
