import { deterministicUuid } from '../shared/deterministic-id';

/**
 * The user of a key that no person asked for: the first start's admin key, and every key issued
 * before keys had users (ApiKeyIssued v1 is upcast with it). Derived from the key, so the
 * bootstrap can make that user an owner of the first org on any later start.
 */
export function keyHolderIdOf(key_id: string): string {
  return deterministicUuid('key-holder', key_id);
}
