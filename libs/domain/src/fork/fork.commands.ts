import type { DomainCommand } from '../shared/decider';
import type { ForkFailureKind, ForkRequested } from './fork.events';

/** From the API, after resolving the public source and checking the target tag is free. */
export type RequestFork = DomainCommand<'RequestFork', Omit<ForkRequested['data'], 'requested_at'> & { now: string }>;

/** From the worker, as the saga takes its steps. */
export type RecordForkVmStarted = DomainCommand<'RecordForkVmStarted'>;
export type RecordForkCommitted = DomainCommand<'RecordForkCommitted'>;
export type RecordForkRepositoryReady = DomainCommand<'RecordForkRepositoryReady', { created: boolean }>;
export type RecordRepoForked = DomainCommand<'RecordRepoForked', { now: string }>;
export type AbortFork = DomainCommand<'AbortFork', { kind: ForkFailureKind; reason: string }>;
export type RecordForkFailed = DomainCommand<'RecordForkFailed', { now: string }>;

export type ForkCommand = RequestFork | RecordForkVmStarted | RecordForkCommitted | RecordForkRepositoryReady | RecordRepoForked | AbortFork | RecordForkFailed;
