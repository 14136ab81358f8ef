/** One piece of work waiting for its stream's turn, and how to answer it. */
export interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Work on one stream taken in turns, in batches: whatever is submitted while a batch of the
 * stream runs waits and goes as the next batch, in submission order. Streams are independent.
 *
 * Why (for the aggregate repository's commands): deciding is optimistic, an append at the exact
 * revision read, decided again on a conflict; right across processes, but a burst of commands on
 * one hot stream in one process (a hundred VM creations of an org, each reserving on
 * `usage-<org>`) would conflict with each other round after round, every loser reading and
 * deciding again. Batched, the stream is read once per batch, each command is decided on the
 * state the ones before it leave, and their appends go out together (one group commit).
 */
export class StreamBatches<T, R> {
  private readonly waiting = new Map<string, Waiting<T, R>[]>();

  /**
   * `run` answers every piece of its batch (resolve or reject); if it throws, the pieces it left
   * get its error. A batch holds at most `maxBatch` pieces (the rest go in the next).
   */
  constructor(
    private readonly run: (stream: string, batch: Waiting<T, R>[]) => Promise<void>,
    private readonly maxBatch = 256,
  ) {}

  submit(stream: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.waiting.get(stream);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      this.waiting.set(stream, [{ item, resolve, reject }]);
      void this.drain(stream);
    });
  }

  /** Runs the stream's batches until nothing waits (the first waits one microtask, gathering the rest of its turn). */
  private async drain(stream: string): Promise<void> {
    await Promise.resolve();
    for (;;) {
      const batch = this.waiting.get(stream)!.splice(0, this.maxBatch);
      if (batch.length === 0) {
        this.waiting.delete(stream);
        return;
      }
      // A promise is answered once: after the run, these reach only the pieces it left unanswered.
      const unanswered = (error: unknown) => batch.forEach((waiting) => waiting.reject(error));
      try {
        await this.run(stream, batch);
        unanswered(new Error(`a batch of work on ${stream} ended without answering it`));
      } catch (error) {
        unanswered(error);
      }
    }
  }
}
