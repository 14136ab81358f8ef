import { invalid } from '../shared/domain-error';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A custom domain: a host name by RFC 1123 (labels of letters, digits and inner hyphens, 1-63
 * characters each, 253 in all), with at least two labels and an alphabetic top-level one (so no
 * bare name and no IPv4 address). Case does not matter and one trailing dot is allowed; the
 * answer is lowercase without it. A 400 says what is wrong.
 */
export function requireHostName(value: string): string {
  const name = value.endsWith('.') ? value.slice(0, -1).toLowerCase() : value.toLowerCase();
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  if (name.length === 0) throw invalid('domain must not be empty');
  if (name.length > 253) throw invalid(`domain '${shown}' is longer than 253 characters`);
  if (!/^[\x21-\x7e]+$/.test(name)) throw invalid(`domain '${shown}' may hold only ASCII letters, digits, "-" and "." (write an internationalized name in its xn-- form)`);
  const labels = name.split('.');
  if (labels.length < 2) throw invalid(`domain '${shown}' must be a fully qualified name (e.g. app.example.com)`);
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    throw invalid(`domain '${shown}' is not a valid host name: each label holds 1-63 letters, digits or inner hyphens (RFC 1123), not '${bad.slice(0, 63)}'`);
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1])) throw invalid(`domain '${shown}' is an address, not a host name: its last label must hold a letter`);
  return name;
}
