import type { ExecChunk } from '@arbor/hypervisor';

export interface ExecOutputBatcherOptions {
  /** At most one batch per window (after the first, which goes out at once). */
  windowMs: number;
  /** A batch is sent early once it holds this much; no chunk sent is larger. */
  maxChunkBytes: number;
  /** One batch (one append) holds at most this much, so no append grows past what a store takes. */
  maxBatchBytes: number;
  /** While this much waits to be sent, push() asks the producer to wait (backpressure). */
  highWaterBytes: number;
}

export const DEFAULT_BATCHING: ExecOutputBatcherOptions = { windowMs: 20, maxChunkBytes: 64 * 1024, maxBatchBytes: 512 * 1024, highWaterBytes: 1024 * 1024 };

/**
 * Groups a command's output chunks into batches, so a chatty command does not become one event per
 * write, while the first output still goes out at once. One batch is sent at a time, in order;
 * adjacent chunks of the same stream are merged (up to maxChunkBytes each). A producer faster than
 * the log is held back: push() returns a promise while too much waits, so what the worker holds
 * per exec stays bounded whatever the command prints.
 */
export class ExecOutputBatcher {
  private pending: ExecChunk[] = [];
  private pendingBytes = 0;
  private sending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastSentAt = 0;
  private failure: unknown = null;
  private closing = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly send: (chunks: ExecChunk[]) => Promise<unknown>,
    private readonly options: ExecOutputBatcherOptions = DEFAULT_BATCHING,
  ) {}

  /** Takes a chunk; returns a promise to wait for before the next one while too much is pending. */
  push(chunk: ExecChunk): Promise<void> | undefined {
    for (let offset = 0; offset < chunk.data.length; offset += this.options.maxChunkBytes) {
      this.add(chunk.stream, chunk.data.subarray(offset, offset + this.options.maxChunkBytes));
    }
    this.schedule();
    if (this.pendingBytes < this.options.highWaterBytes || this.failure) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends what is left and resolves when every batch is out; rejects if one could not be sent. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.sending || this.pending.length) {
      if (this.sending) await this.sending;
      else this.sendPending();
    }
    this.release();
    if (this.failure) throw this.failure;
  }

  private add(stream: ExecChunk['stream'], data: Buffer): void {
    const last = this.pending[this.pending.length - 1];
    if (last?.stream === stream && last.data.length + data.length <= this.options.maxChunkBytes) {
      last.data = Buffer.concat([last.data, data]);
    } else {
      this.pending.push({ stream, data: Buffer.from(data) });
    }
    this.pendingBytes += data.length;
  }

  private schedule(): void {
    // A running send reschedules when done; once closing, close() sends the rest itself.
    if (this.sending || this.timer || this.closing || !this.pending.length) return;
    const wait = this.pendingBytes >= this.options.maxChunkBytes ? 0 : this.lastSentAt + this.options.windowMs - Date.now();
    if (wait <= 0) return this.sendPending();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sendPending();
    }, wait);
  }

  private sendPending(): void {
    if (this.sending || !this.pending.length) return;
    let count = 0;
    let bytes = 0;
    while (count < this.pending.length && (count === 0 || bytes + this.pending[count].data.length <= this.options.maxBatchBytes)) {
      bytes += this.pending[count].data.length;
      count++;
    }
    const batch = this.pending.splice(0, count);
    this.pendingBytes -= bytes;
    this.releaseIfBelowHighWater();
    this.lastSentAt = Date.now();
    this.sending = this.send(batch)
      .then(
        () => undefined,
        (error) => {
          this.failure ??= error;
        },
      )
      .finally(() => {
        this.sending = null;
        this.releaseIfBelowHighWater();
        this.schedule();
      });
  }

  private releaseIfBelowHighWater(): void {
    if (this.pendingBytes < this.options.highWaterBytes || this.failure) this.release();
  }

  /** Lets waiting producers go on. */
  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((resume) => resume());
  }
}
