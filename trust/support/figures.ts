import { appendFileSync } from 'node:fs';
import { TRUST_FORM, TRUST_SEED } from './trust-settings';

export type Figures = Record<string, number | string>;

/**
 * Prints one part's figures as a block of its own (to stdout, past jest's console capture), and
 * appends them as a JSON line to TRUST_FIGURES_FILE when set, for TRUST.md.
 */
export function printFigures(part: string, figures: Figures): void {
  const line = Object.entries(figures)
    .map(([name, value]) => `${name} ${value}`)
    .join(' · ');
  process.stdout.write(`\ntrust ${part} (${TRUST_FORM} form, TRUST_SEED=${TRUST_SEED}): ${line}\n`);
  const file = process.env.TRUST_FIGURES_FILE;
  if (file) appendFileSync(file, `${JSON.stringify({ part, form: TRUST_FORM, seed: TRUST_SEED, at: new Date().toISOString(), ...figures })}\n`);
}
