import type { EventStore, RecordedEvent } from '@arbor/event-store';
import { waitUntil } from './wait-until';

/**
 * Waits for the first event after `afterRevision` in a stream that `match` accepts — e.g. the
 * worker's outcome of an intent the API just appended.
 */
export async function awaitStreamEvent(
  store: EventStore,
  streamId: string,
  afterRevision: number,
  match: (event: RecordedEvent) => boolean,
  what: string,
  timeoutMs: number,
): Promise<RecordedEvent> {
  let from = afterRevision + 1;
  return waitUntil(
    what,
    async () => {
      const events = await store.readStream(streamId, { from_revision: from });
      if (events.length) from = events[events.length - 1].revision + 1;
      return events.find(match);
    },
    { timeoutMs, intervalMs: 5 },
  );
}
