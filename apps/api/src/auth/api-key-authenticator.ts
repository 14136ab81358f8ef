import { Injectable } from '@nestjs/common';
import { AggregateRepository } from '@arbor/application';
import { ApiKey, parseApiKey, secretMatches } from '@arbor/domain';
import type { Principal } from './principal';

/**
 * Resolves a bearer key to its principal from the key's own stream (`apikey-<id>`), so a key
 * works the moment it is issued, with no projector lag. Only the secret's hash is stored.
 */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(private readonly aggregates: AggregateRepository) {}

  async authenticate(key: string): Promise<Principal | null> {
    const parsed = parseApiKey(key.trim().toLowerCase());
    if (!parsed) return null;
    const { state } = await this.aggregates.load(ApiKey, parsed.key_id);
    if (state.status !== 'active' || !secretMatches(parsed.secret, state.key!.secret_sha256)) return null;
    const { key_id, org_id, is_operator } = state.key!;
    return { key_id, org_id, is_operator };
  }
}
