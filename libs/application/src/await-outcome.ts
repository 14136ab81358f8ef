import { outcomeOf, type Aggregate, type DomainEvent, type Outcome } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';
import { toDomainEvent } from './event-envelope';
import { waitUntil } from './wait-until';

/** How an intent ended, and the log position of the last event read with its ending. */
export interface Settled {
  outcome: Outcome;
  position: number;
}

/**
 * Waits for the first event after `afterRevision` that ends `intent`, by the aggregate's outcome
 * rules (see IntentOutcomes). Polls the store, so it works the same whichever process appends
 * the ending, and wakes at once for an append to the stream made through this process. The position is that of the last event read: everything appended with the ending
 * (a failed boot's deletion, say) is at or before it.
 */
export async function awaitOutcome<Id, E extends DomainEvent>(
  store: EventStore,
  aggregate: Aggregate<Id, any, any, E>,
  id: Id,
  intent: E['type'],
  afterRevision: number,
  timeoutMs: number,
): Promise<Settled> {
  const stream = aggregate.stream(id);
  let from = afterRevision + 1;
  return waitUntil(
    `${intent} on ${stream} to finish`,
    async () => {
      const events = await store.readStream(stream, { from_revision: from });
      if (!events.length) return undefined;
      from = events[events.length - 1].revision + 1;
      for (const recorded of events) {
        const outcome = outcomeOf(aggregate.outcomes, intent, toDomainEvent<E>(recorded));
        if (outcome) return { outcome, position: events[events.length - 1].position };
      }
      return undefined;
    },
    // An append to the stream through this process (the embedded worker's) looks again at once.
    { timeoutMs, intervalMs: 5, wake: (listener) => store.onAppended((appended) => appended === stream && listener()) },
  );
}
