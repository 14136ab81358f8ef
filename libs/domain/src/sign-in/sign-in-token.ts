import { createHash, randomBytes } from 'node:crypto';

/**
 * A sign-in link's token: `<user id>.<secret>`. The user id names the sign-in stream; the
 * secret (256 random bits, base64url) is what proves the link was read. Only its SHA-256 is
 * stored (SignInRequested.token_sha256).
 */
export function generateSignInToken(user_id: string): { token: string; token_sha256: string } {
  const secret = randomBytes(32).toString('base64url');
  return { token: `${user_id}.${secret}`, token_sha256: hashSignInSecret(secret) };
}

export function hashSignInSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The parts of a token, or null for anything that is not one. */
export function parseSignInToken(token: unknown): { user_id: string; token_sha256: string } | null {
  if (typeof token !== 'string') return null;
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return match ? { user_id: match[1], token_sha256: hashSignInSecret(match[2]) } : null;
}
