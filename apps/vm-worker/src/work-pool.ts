/**
 * At most `size` pieces of work at once; the others wait their turn, first come first served.
 * The worker runs machine operations through one (see VmWorker): each costs the host CPU and
 * processes of its own, and a burst of a hundred started at once would have every one of them
 * crawl instead of most finishing early.
 */
export class WorkPool {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`a work pool needs at least one slot (got ${size})`);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line (running stays counted), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
