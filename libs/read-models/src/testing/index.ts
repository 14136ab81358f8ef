export * from './mongo-fake';
export * from './read-model-store.contract';
