import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `idempotency-<org>-<key hash>`: the first successful response to a write sent with an
 * X-Idempotency-Key; a retry with that key gets it again. Written once.
 */
export type IdempotentResponseRecorded = DomainEvent<'IdempotentResponseRecorded', { method: string; path: string; status: number; body: unknown }>;
export type IdempotentResponseEvent = IdempotentResponseRecorded;
export const IDEMPOTENT_RESPONSE_EVENT_TYPES = eventTypes<IdempotentResponseEvent>()('IdempotentResponseRecorded');
