import type { EventStore } from '@arbor/event-store';
import type { ReadModelStore } from '@arbor/read-models';

/*
 * The distributed adapters, required only when configured (EVENTSTORE_URL, MONGODB_URL): their
 * clients (gRPC and protobuf, the MongoDB driver) take about half a second to load, which every
 * process, and every test file that starts the service, would pay otherwise.
 */

export function eventStoreDbAt(url: string): EventStore {
  const { EventStoreDbEventStore } = require('@arbor/event-store/eventstoredb') as typeof import('@arbor/event-store/eventstoredb');
  return new EventStoreDbEventStore(url);
}

export function connectMongoReadModels(url: string): Promise<ReadModelStore> {
  const { MongoReadModelStore } = require('@arbor/read-models/mongodb') as typeof import('@arbor/read-models/mongodb');
  return MongoReadModelStore.connect(url);
}
