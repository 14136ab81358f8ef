type Body = Parameters<jest.It>[1];

/**
 * `describe` / `it` when `reason` is null; otherwise the `.skip` form with the reason in its title
 * ("… — skipped: <reason>"), also printed (a run that is not verbose shows no skipped titles), so
 * a run where the host cannot run a suite says why, not just "skipped".
 */
export function describeUnless(reason: string | null): (title: string, fn: () => void) => void {
  return reason === null ? describe : (title, fn) => describe.skip(skipped(title, reason), fn);
}

export function itUnless(reason: string | null): (title: string, fn: Body, timeout?: number) => void {
  return reason === null ? it : (title, fn, timeout) => it.skip(skipped(title, reason), fn, timeout);
}

function skipped(title: string, reason: string): string {
  const said = `${title} — skipped: ${reason}`;
  console.warn(said);
  return said;
}

/** Null as root; the reason otherwise (namespaces, mounts, cgroups and nftables need root). */
export const rootReason: string | null = process.getuid?.() === 0 ? null : 'needs root (namespaces, mounts, cgroups, nftables)';
