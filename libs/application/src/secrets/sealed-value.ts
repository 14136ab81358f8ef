import { decrypt, encrypt } from './aead';
import type { DataKey } from './org-keys';

const PREFIX = 'arbor:sealed:v1:';
const TOKEN = /^arbor:sealed:v1:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([A-Za-z0-9_-]+)$/;

/**
 * A secret as the log holds it: `arbor:sealed:v1:<key id>:<base64url of AES-256-GCM>`, sealed with
 * an org's data key and bound to where it is written (`associated`: the event type and field).
 */
export function sealValue(key: DataKey, plaintext: Buffer, associated: string): string {
  return `${PREFIX}${key.key_id}:${encrypt(key.key, plaintext, associated).toString('base64url')}`;
}

/** The key id and ciphertext (still base64url: decoded only when opened) of a sealed value, or null for anything else. */
export function parseSealedValue(value: string): { key_id: string; sealed: string } | null {
  const match = TOKEN.exec(value);
  return match ? { key_id: match[1], sealed: match[2] } : null;
}

export function openValue(key: Buffer, sealed: string, associated: string): Buffer {
  return decrypt(key, Buffer.from(sealed, 'base64url'), associated);
}

/**
 * Whether a value read from the log is still sealed: its key was deleted (the org's secrets were
 * shredded), so it can never be read again. Whoever needs the plaintext (the worker writing a
 * file, running an exec, booting a VM with env vars) treats it as gone.
 */
export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX) && TOKEN.test(value);
}
