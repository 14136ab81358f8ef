/** A setting that must be a positive whole number (a count, milliseconds): `fallback` when unset or empty, an error naming it otherwise. */
export function positiveSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number (got "${raw}")`);
  return value;
}
