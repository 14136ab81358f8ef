import { createHash } from 'node:crypto';

/**
 * How much the trust suite does. `npm run trust` is the full form (TRUST_FORM=full); `npm test`
 * runs the short one, a few minutes in all. Any count can be set on its own through the
 * environment (TRUST_CHAOS_ROUNDS=50 npm run trust), and TRUST_SEED replays a run's choices.
 */
export const TRUST_FORM: 'full' | 'short' = process.env.TRUST_FORM === 'full' ? 'full' : 'short';

/** `TRUST_<NAME>` from the environment, else the form's default. */
export function trustSetting(name: string, defaults: { short: number; full: number }): number {
  const raw = process.env[`TRUST_${name}`];
  if (raw === undefined || raw === '') return defaults[TRUST_FORM];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`TRUST_${name} must be a whole number, not ${JSON.stringify(raw)}`);
  return value;
}

/** The run's seed: TRUST_SEED, or a fresh one (printed with every part's figures, to replay it). */
export const TRUST_SEED = trustSetting('SEED', { short: Math.floor(Math.random() * 2 ** 31), full: Math.floor(Math.random() * 2 ** 31) });

/** A seed of its own for one named choice, the same whatever ran before it, so one failure replays alone. */
export function seedFor(...names: string[]): number {
  return createHash('sha256').update([TRUST_SEED, ...names].join('\0')).digest().readUInt32BE(0) & 0x7fffffff;
}
