import { invalid } from '../shared/domain-error';

/** What a key is for (`vers-cli-laptop`, `ci`): 5 to 100 characters, as the shell-auth contract asks at least 5. */
export function requireApiKeyLabel(raw: unknown): string {
  if (typeof raw !== 'string') throw invalid('label is required (5 to 100 characters)');
  const label = raw.trim();
  if (label.length < 5 || label.length > 100) throw invalid(`label must be 5 to 100 characters (got ${label.length})`);
  return label;
}
