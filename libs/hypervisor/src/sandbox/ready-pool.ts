import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { ensurePrivateDirectory } from '../host/private-directory';
import { isSafeId } from '../host/safe-id';
import { sleep } from '../host/sleep';
import { MachineLayout } from './machine-layout';

export interface ReadyPoolOptions<Kind> {
  /** What one is called in the log ("warm machine", "spare disk"). */
  noun: string;
  /** How many are kept ready (0: none; the pool does nothing). */
  size: number;
  /** Of which kind until one of another is asked for (then the pool follows it). */
  kind: Kind;
  /** How many are made at once while it refills. */
  concurrency: number;
}

/**
 * The pool refills once the driver has made, claimed or destroyed no machine for this long:
 * making competes with the operations of a burst for the CPU and the host lock, and a burst is
 * served best from what waits. Under work that never pauses, what is asked for is made cold.
 */
export const REFILL_AFTER_QUIET_MS = 500;

/**
 * Things a sandbox machine needs, made ahead of time in directories of their own under `dir`
 * (`<dir>/<id>`, laid out as machine directories, where the driver's list never looks): the warm
 * machines of warm-pool.ts and the spare disks of disk-pool.ts. It keeps `size` of one kind ready,
 * hands each out once (`take`: the taker moves it away), refills when the driver has been quiet,
 * backs off after failures, and follows the kind asked for.
 *
 * Crash safety: what waits is never adopted. Whatever a start finds in `dir` (waiting, half made,
 * or half taken) is destroyed, and the pool filled again.
 *
 * A pool of one thing extends it: `build` and `tearDown` say how one is made and unmade, and its
 * own claim hands one out through `take`.
 */
export abstract class ReadyPool<Kind> {
  private readonly waiting: string[] = [];
  private making = 0;
  private failures = 0;
  private stopped = true;
  private readonly full: (() => void)[] = [];
  private readonly settled = new Set<Promise<void>>();
  private refill: NodeJS.Timeout | null = null;
  private current: Kind;

  protected constructor(
    protected readonly dir: string,
    private readonly options: ReadyPoolOptions<Kind>,
    protected readonly log: (line: string) => void,
  ) {
    this.current = options.kind;
  }

  /** Makes one of `kind` in `layout`, a directory claimed for it (0700); throws on failure. */
  protected abstract build(layout: MachineLayout, kind: Kind): Promise<void>;

  /** Tears down whatever the one in `layout` holds; idempotent. */
  protected abstract tearDown(layout: MachineLayout): Promise<void>;

  /** The kind it keeps now. */
  protected get kind(): Kind {
    return this.current;
  }

  /** Whether it hands nothing out (no size, or stopped). */
  protected get off(): boolean {
    return this.stopped || this.options.size === 0;
  }

  /** Destroys what an earlier run left in `dir`, then starts filling (if it has a size). */
  async start(): Promise<void> {
    if (this.options.size === 0) return;
    await ensurePrivateDirectory(this.dir);
    await this.destroyLeftovers();
    this.stopped = false;
    this.fill();
  }

  /** Destroys everything in `dir` this pool is not keeping (all of it, once stopped). */
  async destroyLeftovers(): Promise<void> {
    const ids = (await readdir(this.dir).catch(() => [] as string[])).filter((id) => isSafeId(id) && !this.waiting.includes(id));
    for (const id of ids) await this.destroy(id).catch((error: Error) => this.log(`sandbox: removing ${this.options.noun} ${id} failed: ${error.message}`));
  }

  /** Stops filling and destroys everything waiting (what was taken is someone's, and stays). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.refill) clearTimeout(this.refill);
    await Promise.allSettled([...this.settled]);
    for (const id of this.waiting.splice(0)) await this.destroy(id).catch(() => undefined);
  }

  /** Resolves once the pool holds its size (benchmarks and tests wait for it). */
  whenFull(): Promise<void> {
    if (this.waiting.length >= this.options.size) return Promise.resolve();
    return new Promise((resolve) => this.full.push(resolve));
  }

  /** The id of one waiting (now the caller's, to move out of `dir`), or undefined; a refill follows when the driver is quiet. */
  protected take(): string | undefined {
    const id = this.waiting.shift();
    this.refillWhenQuiet();
    return id;
  }

  /** Another kind is asked for: the pool follows it (what waits of the old kind goes). */
  protected follow(kind: Kind): void {
    this.current = kind;
    const old = this.waiting.splice(0);
    this.track((async () => {
      for (const id of old) await this.destroy(id).catch(() => undefined);
    })());
    this.refillWhenQuiet();
  }

  /** The driver is busy with a machine: a refill waits until it has been quiet a while. */
  busy(): void {
    if (this.refill || this.waiting.length + this.making < this.options.size) this.refillWhenQuiet();
  }

  /** Tears down the one with `id` (one taken and then found unusable, too). */
  protected destroy(id: string): Promise<void> {
    return this.tearDown(new MachineLayout(this.dir, id));
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
    while (!this.stopped && this.making < this.options.concurrency && this.waiting.length + this.making < this.options.size) {
      this.making++;
      this.track(this.makeOne().finally(() => {
        this.making--;
        this.fill();
      }));
    }
  }

  private async makeOne(): Promise<void> {
    // After failures, wait a little more each time (a host out of something stays so for a while).
    if (this.failures > 0) await sleep(Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6)));
    if (this.stopped) return;
    const kind = this.current;
    const id = randomUUID();
    const layout = new MachineLayout(this.dir, id);
    try {
      await layout.claim();
      await ensurePrivateDirectory(layout.dir);
      await this.build(layout, kind);
    } catch (error) {
      this.failures++;
      this.log(`sandbox: making a ${this.options.noun} failed (the pool tries again): ${(error as Error).message}`);
      await this.destroy(id).catch(() => undefined);
      return;
    }
    this.failures = 0;
    if (this.stopped || kind !== this.current) {
      await this.destroy(id).catch(() => undefined);
      return;
    }
    this.waiting.push(id);
    if (this.waiting.length >= this.options.size) this.full.splice(0).forEach((resolve) => resolve());
  }

  private track(work: Promise<void>): void {
    this.settled.add(work);
    void work.finally(() => this.settled.delete(work));
  }
}
