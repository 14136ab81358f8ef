export * from './event-store.port';
export { InMemoryEventStore } from './in-memory/in-memory-event-store';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';
