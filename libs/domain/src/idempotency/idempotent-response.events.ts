import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `idempotency-<org>-<key hash>`: the first successful response to a write sent with an
 * X-Idempotency-Key; a retry with that key gets it again. Written once.
 */
export type IdempotentResponseRecorded = DomainEvent<
  'IdempotentResponseRecorded',
  {
    method: string;
    path: string;
    status: number;
    /**
     * The response body (it may hold secrets: PUT /env_vars answers the values). Sealed in the log
     * with the org's key, as JSON.
     * @sealed "json"
     */
    body: unknown;
  }
>;
export type IdempotentResponseEvent = IdempotentResponseRecorded;
export const IDEMPOTENT_RESPONSE_EVENT_TYPES = eventTypes<IdempotentResponseEvent>()('IdempotentResponseRecorded');
