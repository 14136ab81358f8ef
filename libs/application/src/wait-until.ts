/** Raised when a write's effect did not show up in time (the API answers 504). */
export class WaitTimeoutError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}`);
    this.name = 'WaitTimeoutError';
  }
}

/**
 * Polls `probe` until it returns a value other than undefined. Polling (not an in-process event)
 * so it works the same when the projector or worker runs in another process.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let interval = options.intervalMs ?? 2;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new WaitTimeoutError(what, options.timeoutMs);
    await new Promise((r) => setTimeout(r, interval));
    interval = Math.min(interval * 2, 50);
  }
}
