import { createHash } from 'node:crypto';

/**
 * A UUID (version 5 layout) derived from its inputs. Event ids are derived from the command id,
 * so a retried command produces the same ids and the event store appends nothing new.
 */
export function deterministicUuid(...parts: string[]): string {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
