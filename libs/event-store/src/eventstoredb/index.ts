/**
 * The EventStoreDB adapter, an entry of its own (`@arbor/event-store/eventstoredb`): its client
 * (gRPC, protobuf) takes a quarter of a second to load, so only a process configured with
 * EVENTSTORE_URL loads it (openEventStore imports it then).
 */
export { EventStoreDbEventStore } from './eventstoredb-event-store';
