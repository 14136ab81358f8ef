import { Injectable } from '@nestjs/common';
import { AggregateRepository } from '@arbor/application';
import { ApiKey, Org, parseApiKey, secretMatches } from '@arbor/domain';
import { ApiKeyUsageRecorder } from './api-key-usage-recorder';
import type { Principal } from './principal';

/**
 * How long a process trusts what it read of a key (its state, its user's membership and role).
 * A revocation, a removal or a role change in any api process takes effect in every other one
 * within this; in the process that made it, at once (`forget`).
 */
export const KEY_CACHE_MS = 500;
/** Past this many cached keys the cache starts afresh (bounds memory under a flood of made-up key ids). */
const MAX_CACHED_KEYS = 10_000;

interface KeyGrant {
  secret_sha256: string;
  principal: Principal;
}

/**
 * Resolves a bearer key to its principal from the key's own stream (`apikey-<id>`) and its org's
 * (`org-<id>`: is its user still a member, and with which role), so a key works the moment it
 * is issued and stops within KEY_CACHE_MS of being revoked or of its user leaving the org. Only
 * the secret's hash is stored; it is compared in constant time on every request.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { grant: KeyGrant | null; until: number }>();

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly usage: ApiKeyUsageRecorder,
  ) {}

  async authenticate(key: string): Promise<Principal | null> {
    const parsed = parseApiKey(key.trim().toLowerCase());
    if (!parsed) return null;
    const grant = await this.grantOf(parsed.key_id);
    if (!grant || !secretMatches(parsed.secret, grant.secret_sha256)) return null;
    this.usage.saw(grant.principal);
    return grant.principal;
  }

  /** Drops what this process read of a key (or of every key): a change it made applies to its next request. */
  forget(key_id?: string): void {
    if (key_id) this.cache.delete(key_id);
    else this.cache.clear();
  }

  private async grantOf(key_id: string): Promise<KeyGrant | null> {
    const now = Date.now();
    const cached = this.cache.get(key_id);
    if (cached && cached.until > now) return cached.grant;
    const grant = await this.load(key_id);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
    this.cache.set(key_id, { grant, until: now + KEY_CACHE_MS });
    return grant;
  }

  private async load(key_id: string): Promise<KeyGrant | null> {
    const { state } = await this.aggregates.load(ApiKey, key_id);
    if (state.status !== 'active') return null;
    const { org_id, user_id, is_operator, secret_sha256 } = state.key!;
    const role = (await this.aggregates.load(Org, org_id)).state.members[user_id];
    if (!role) return null; // no longer a member: the key acts for nobody
    return { secret_sha256, principal: { key_id, org_id, user_id, role, is_operator } };
  }
}
