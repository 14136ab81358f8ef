/** Resolves after `ms` milliseconds: the pause between two polls of something the host does. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
