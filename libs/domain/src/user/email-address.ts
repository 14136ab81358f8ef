import { deterministicUuid } from '../shared/deterministic-id';
import { invalid } from '../shared/domain-error';

/**
 * The address rule of HTML's `<input type=email>` (WHATWG): what browsers accept, and what mail
 * servers deliver. Checked on the address as written; stored and compared lowercased.
 */
const EMAIL_PATTERN = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;
const MAX_EMAIL_LENGTH = 254;

/** The address, trimmed and lowercased (one account per address, whatever its case), or a 400. */
export function requireEmail(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.trim()) throw invalid('email is required');
  const email = raw.trim();
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(email)) throw invalid(`email '${email.slice(0, 80)}' is not a valid e-mail address`);
  return email.toLowerCase();
}

/** `a+x@example.com` is an alias of `a@example.com`: the base address, or null for an address that is no alias. */
export function aliasBaseOf(email: string): string | null {
  const at = email.lastIndexOf('@');
  const plus = email.indexOf('+');
  if (plus < 0 || plus > at) return null;
  return email.slice(0, plus) + email.slice(at);
}

/**
 * A user's id follows from their (normalized) address, so every process, and every sign-in
 * started before the user exists, agrees on it: the user's stream is the address's reservation.
 */
export function userIdOf(email: string): string {
  return deterministicUuid('user', email);
}
