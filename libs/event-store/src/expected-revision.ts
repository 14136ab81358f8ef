import type { ExpectedRevision, NewEvent } from './event-store.port';

/** The rules every adapter applies to an append's expected revision (EventStoreDB's semantics). */

/** Whether a stream at `current` (-1: no stream) is where the append expects it. */
export function satisfies(expected: ExpectedRevision, current: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === -1;
  if (expected === 'stream_exists') return current >= 0;
  return expected === current;
}

/** The `actual` of a WrongExpectedVersionError for a stream at `current`. */
export function actualOf(current: number): number | 'no_stream' {
  return current === -1 ? 'no_stream' : current;
}

/**
 * Where a retried batch would sit in the stream: right after `expected`, or for any/stream_exists
 * wherever its first event is (`revisionOfFirst`, null when that id is not in the stream).
 */
export function retryStart(expected: ExpectedRevision, revisionOfFirst: () => number | null): number | null {
  if (typeof expected === 'number') return expected + 1;
  if (expected === 'no_stream') return 0;
  return revisionOfFirst();
}

/**
 * A batch whose ids are already in the stream where it would go is a retry (answer with the first
 * result, append nothing); one that only partly matches is a conflict; otherwise it is new.
 */
export function classifyRetry(storedIds: (string | undefined)[], events: NewEvent[]): 'retry' | 'conflict' | 'new' {
  if (storedIds[0] !== events[0].id) return 'new';
  return events.every((event, index) => storedIds[index] === event.id) ? 'retry' : 'conflict';
}
