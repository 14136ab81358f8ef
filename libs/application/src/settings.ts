/** A setting that must be a positive whole number (a count, milliseconds): `fallback` when unset or empty, an error naming it otherwise. */
export function positiveSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number (got "${raw}")`);
  return value;
}

/** A yes/no setting: `true`/`1`/`yes` or `false`/`0`/`no` (any case); `fallback` when unset or empty, an error naming it otherwise. */
export function booleanSetting(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new Error(`${name} must be true or false (got "${env[name]}")`);
}

/** A whole number, 0 allowed (a floor of 0 turns the check off). */
export function wholeSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, 0 or more (got "${raw}")`);
  return value;
}
