/** Polls a condition (bounded): for effects that happen asynchronously by design. */
export async function pollUntil(condition: () => Promise<boolean>, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
}
