export * from './esdb-fake';
export * from './event-store.contract';
