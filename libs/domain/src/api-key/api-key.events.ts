import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `apikey-<key id>`. A key is a member's credential in one org: it acts as its user, with
 * that user's role there. Only a hash of the secret is ever stored. An operator key may read
 * every org's events (the audit feed); other keys see their own org only.
 */
export type ApiKeyIssued = DomainEvent<
  'ApiKeyIssued',
  {
    key_id: string;
    org_id: string;
    /** The member the key acts as (keys issued before users existed: see keyHolderIdOf). */
    user_id: string;
    label: string;
    /**
     * SHA-256 of the key's secret: what authenticates it. Never shown in the feed.
     * @redacted
     */
    secret_sha256: string;
    is_operator: boolean;
    issued_at: string;
  }
>;
/** The key never authenticates again. */
export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', { key_id: string; revoked_at: string }>;
export type ApiKeyEvent = ApiKeyIssued | ApiKeyRevoked;
export const API_KEY_EVENT_TYPES = eventTypes<ApiKeyEvent>()('ApiKeyIssued', 'ApiKeyRevoked');
