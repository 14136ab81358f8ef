/** One deadline of a Deadlines: cancel it once what it bounds is done. */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

/**
 * Deadlines checked together by one timer, every `tickMs`, instead of a timer each: each timer is
 * an async resource (created, hooked, cleared), and a fresh connection's path holds two of them
 * (its first bytes, its connection to the VM) for deadlines that almost never expire. One of
 * these expires up to `tickMs` late, which bounds of seconds do not mind. The timer runs only
 * while a deadline is pending, and never keeps the process up.
 */
export class Deadlines {
  private readonly pending = new Set<Deadline>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly tickMs: number) {}

  get size(): number {
    return this.pending.size;
  }

  /** Calls `expire` once `ms` have passed, unless the deadline is cancelled first. */
  add(ms: number, expire: () => void): Deadline {
    const deadline: Deadline = { at: Date.now() + ms, expire };
    this.pending.add(deadline);
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
    return deadline;
  }

  cancel(deadline: Deadline | undefined): void {
    if (deadline) this.pending.delete(deadline);
  }

  private tick(): void {
    const now = Date.now();
    for (const deadline of this.pending) {
      if (deadline.at > now) continue;
      this.pending.delete(deadline);
      deadline.expire();
    }
    if (this.pending.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

/** The deadlines of the edge's connections (their first bytes, their connection to the VM): a quarter of a second late at most. */
export const connectionDeadlines = new Deadlines(250);
