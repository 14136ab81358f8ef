import { Inject, Injectable } from '@nestjs/common';
import { type ApiKeyEvent, parseApiKey, secretMatches, streams } from '@arbor/domain';
import { toDomainEvent } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import type { Principal } from './principal';

/**
 * Resolves a bearer key to its principal from the key's own stream (`apikey-<id>`), so a key
 * works the moment it is issued, with no projector lag. Only the secret's hash is stored.
 */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(@Inject(EVENT_STORE) private readonly events: EventStore) {}

  async authenticate(key: string): Promise<Principal | null> {
    const parsed = parseApiKey(key.trim().toLowerCase());
    if (!parsed) return null;
    const recorded = await this.events.readStream(streams.apiKey(parsed.key_id));
    let principal: (Principal & { secret_sha256: string }) | null = null;
    for (const event of recorded.map((r) => toDomainEvent<ApiKeyEvent>(r))) {
      if (event.type === 'ApiKeyIssued') {
        const { key_id, org_id, is_operator, secret_sha256 } = event.data;
        principal = { key_id, org_id, is_operator, secret_sha256 };
      }
      if (event.type === 'ApiKeyRevoked') principal = null;
    }
    if (!principal || !secretMatches(parsed.secret, principal.secret_sha256)) return null;
    return { key_id: principal.key_id, org_id: principal.org_id, is_operator: principal.is_operator };
  }
}
