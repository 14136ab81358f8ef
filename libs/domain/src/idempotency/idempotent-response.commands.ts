import type { DomainCommand } from '../shared/decider';
import type { IdempotentResponseRecorded } from './idempotent-response.events';

export type RecordIdempotentResponse = DomainCommand<'RecordIdempotentResponse', IdempotentResponseRecorded['data']>;
export type IdempotentResponseCommand = RecordIdempotentResponse;
