/**
 * The environment every exec gets, on both drivers (the contract fixes it): these defaults, then
 * the machine's /etc/environment (read inside the machine), then the exec's own env; nothing of
 * the host's.
 */
export const DEFAULT_EXEC_ENV: Readonly<Record<'PATH' | 'HOME', string>> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/root',
};

/**
 * /etc/environment as the contract wants it: plain KEY=VALUE lines, sorted by key. Execs read it
 * back inside the machine (the ordered-exec program in ordered-output.ts), which, as pam_env
 * does, takes a value wrapped in a pair of quotes without them: such a value gets one more pair,
 * so it comes back exactly as it was set.
 */
export function formatEnvironmentFile(env: Record<string, string>): string {
  const keys = Object.keys(env).sort();
  return keys.map((key) => `${key}=${keepQuotes(env[key])}\n`).join('');
}

function keepQuotes(value: string): string {
  const quoted = value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0];
  return quoted ? `${value[0]}${value}${value[0]}` : value;
}
