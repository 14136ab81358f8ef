import { type Wake, WakeOnChange } from './wake-on-change';

/** Raised when a write's effect did not show up in time (the API answers 504). */
export class WaitTimeoutError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}`);
    this.name = 'WaitTimeoutError';
  }
}

export interface WaitUntilOptions {
  timeoutMs: number;
  /** The first poll interval (it doubles up to 50 ms); default 2 ms. */
  intervalMs?: number;
  /** In-process changes that may answer the probe: each one probes again at once (see WakeOnChange). */
  wake?: Wake;
}

/**
 * Polls `probe` until it returns a value other than undefined. Polling, so it works the same when
 * the projector or worker runs in another process; `wake` probes again at once on a change made in
 * this process, so the embedded service does not wait out a poll interval.
 */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, options: WaitUntilOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let interval = options.intervalMs ?? 2;
  const changes = new WakeOnChange(options.wake);
  try {
    for (;;) {
      changes.mark();
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() >= deadline) throw new WaitTimeoutError(what, options.timeoutMs);
      await changes.sleep(interval);
      interval = Math.min(interval * 2, 50);
    }
  } finally {
    changes.close();
  }
}
