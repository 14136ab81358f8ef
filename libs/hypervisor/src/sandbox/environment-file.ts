/**
 * /etc/environment as the contract wants it: plain KEY=VALUE lines, sorted by key. Execs read it
 * back inside the machine (the ordered-exec program in ordered-output.ts).
 */
export function formatEnvironmentFile(env: Record<string, string>): string {
  const keys = Object.keys(env).sort();
  return keys.map((key) => `${key}=${env[key]}\n`).join('');
}
