import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * API keys are `<uuid><64 lowercase hex>`: the uuid is the key id (the `owner_id` of what the key
 * creates), the hex tail is the secret, stored only as a SHA-256 hash. The secret has 256 bits of
 * entropy, so a plain hash (no slow KDF) is enough.
 */
const KEY_PATTERN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})([0-9a-f]{64})$/;

export interface ParsedApiKey {
  key_id: string;
  secret: string;
}

export function parseApiKey(key: string): ParsedApiKey | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { key_id: match[1], secret: match[2] } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, secretSha256: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(secretSha256, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A new key: a fresh secret, under `key_id` (a new uuid unless given). */
export function generateApiKey(key_id: string = randomUUID()): { key: string; key_id: string; secret_sha256: string } {
  const secret = randomBytes(32).toString('hex');
  return { key: key_id + secret, key_id, secret_sha256: hashSecret(secret) };
}
