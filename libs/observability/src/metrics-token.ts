import { createHash, timingSafeEqual } from 'node:crypto';

/** Whether a scrape with this Authorization header may read the metrics (any scrape, without a token). */
export function scrapeAllowed(authorization: string | undefined, token: string | null): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  // Compared as digests: equal lengths, in constant time.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}
