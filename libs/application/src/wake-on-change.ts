/** Listens to changes made in this process (an append, a read-model commit); returns what stops listening. */
export type Wake = (listener: () => void) => () => void;

/**
 * The in-process wake-up of a polling loop. `sleep` waits out the poll interval, but returns at
 * once when a change was heard since the last `mark`, and early when one is heard meanwhile: a
 * change made in this process (the embedded api, worker and projector share their stores) is
 * seen at once, while one made by another process, which calls nothing here, is seen at the next
 * poll as before. Mark before each look at what may change, so nothing heard between the look and
 * the sleep is slept through.
 */
export class WakeOnChange {
  private heard = false;
  private wakeUp: (() => void) | undefined;
  private readonly stopListening: () => void;

  constructor(wake?: Wake) {
    this.stopListening =
      wake?.(() => {
        this.heard = true;
        this.wakeUp?.();
      }) ?? (() => {});
  }

  /** Call right before looking: only what is heard after it cuts the next sleep short. */
  mark(): void {
    this.heard = false;
  }

  /** Resolves after `ms`, or as soon as a change is (or was, since the mark) heard, or `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.heard || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      this.wakeUp = done;
    });
  }

  /** Stops listening; a pending sleep returns. */
  close(): void {
    this.stopListening();
    this.wakeUp?.();
  }
}
