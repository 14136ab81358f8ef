import { availableParallelism } from 'node:os';

/**
 * At most `size` of a kind of work at once, first come first served: what a driver bounds its
 * dearest operations with (booting a machine cold costs the host CPU for a while), and the worker
 * its machine operations, so that a burst of them finishes early ones early instead of crawling
 * all together.
 */
export class Slots {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`slots need a size of at least one (got ${size})`);
  }

  /** `perCpu` slots for each CPU of the host. */
  static perCpu(perCpu: number): Slots {
    return new Slots(Math.max(1, perCpu * availableParallelism()));
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line (busy stays counted), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    }
  }
}
