import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `apikeyuse-<key id>-<hour>` (`2026-11-24T10`, UTC): the key was used in that hour. Each
 * api process records a key's first use of an hour once (the stream is the hour's reservation:
 * one event however many processes saw it), so `last_used_at` is kept to the hour at the cost
 * of at most one write per key an hour, never one per request.
 */
export type ApiKeyUsed = DomainEvent<'ApiKeyUsed', { key_id: string; used_at: string }>;
export type ApiKeyUsageEvent = ApiKeyUsed;
export const API_KEY_USAGE_EVENT_TYPES = eventTypes<ApiKeyUsageEvent>()('ApiKeyUsed');
