/** Percentiles and timing helpers for the benchmarks (they print numbers; nothing asserts on them). */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

export function formatMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

/**
 * "p50 … / p99 …" with the sample count. `percentile` takes the nearest rank, so with 100 samples
 * or fewer the 99th is the slowest sample: then the figure says "max", as it is.
 */
export function spread(p50: number, tail: number, samples: number): string {
  return `p50 ${formatMs(p50)} / ${Math.ceil(0.99 * samples) < samples ? 'p99' : 'max'} ${formatMs(tail)} (n=${samples})`;
}

/** "p50 … / p99 …" of the samples (or "/ max …" where the 99th percentile is the slowest), with their count. */
export const spreadOf = (samples: number[]) => spread(percentile(samples, 50), percentile(samples, 99), samples.length);

export function report(rows: [string, string][]): void {
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) console.log(`  ${name.padEnd(width)}  ${value}`);
}
