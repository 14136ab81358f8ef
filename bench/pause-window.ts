/**
 * Measures how long a driver keeps a machine paused, from the outside: wraps the low-level method
 * the driver pauses and resumes with (the freezer's setFrozen, QMP's execute) on its class's
 * prototype, and records from the start of the call that pauses to the answer of the call that
 * resumes. That bounds the real window from above by one call each side (well under a
 * millisecond here). Benchmarks only: `stop()` puts the method back.
 */
export function watchPauseWindows(
  prototype: object,
  method: string,
  pauses: (args: unknown[]) => boolean,
  resumes: (args: unknown[]) => boolean,
): { windows: number[]; stop(): void } {
  const target = prototype as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = target[method];
  const windows: number[] = [];
  let pausedAt: bigint | null = null;
  target[method] = async function (this: unknown, ...args: unknown[]) {
    if (pauses(args) && pausedAt === null) pausedAt = process.hrtime.bigint();
    const result = await original.apply(this, args);
    // A resume without a pause before it (e.g. destroy thawing a machine) is no window.
    if (resumes(args) && pausedAt !== null) {
      windows.push(Number(process.hrtime.bigint() - pausedAt) / 1e6);
      pausedAt = null;
    }
    return result;
  };
  return { windows, stop: () => void (target[method] = original) };
}
