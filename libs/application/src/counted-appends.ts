import type { EventStore } from '@arbor/event-store';
import { eventsAppended } from '@arbor/observability';

/**
 * The event store, counting what this process appends by event type
 * (`arbor_events_appended_total`): at the port, so every append counts, whoever makes it.
 */
export function countingAppends(store: EventStore): EventStore {
  return {
    async append(stream_id, events, expected) {
      const result = await store.append(stream_id, events, expected);
      for (const event of events) eventsAppended.inc({ type: event.type });
      return result;
    },
    readStream: (stream_id, options) => store.readStream(stream_id, options),
    readAll: (options) => store.readAll(options),
    readAllSerialized: (options) => store.readAllSerialized(options),
    headPosition: () => store.headPosition(),
    subscribeToAll: (options) => store.subscribeToAll(options),
    onAppended: (listener) => store.onAppended(listener),
    close: () => store.close(),
  };
}
