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

export function report(rows: [string, string][]): void {
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) console.log(`  ${name.padEnd(width)}  ${value}`);
}
