/** /etc/environment as the contract wants it: plain KEY=VALUE lines, sorted by key. */
export function formatEnvironmentFile(env: Record<string, string>): string {
  const keys = Object.keys(env).sort();
  return keys.map((key) => `${key}=${env[key]}\n`).join('');
}

/** Reads KEY=VALUE lines back (blank lines and comments ignored, surrounding quotes dropped). */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    const quoted = /^"(.*)"$|^'(.*)'$/.exec(match[2]);
    env[match[1]] = quoted ? (quoted[1] ?? quoted[2]) : match[2];
  }
  return env;
}
