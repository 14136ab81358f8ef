export * from './start-esdb-fake';
