export * from './read-model-store.port';
export * from './documents/vm.document';
export * from './documents/commit.document';
export * from './documents/commit-tag.document';
export * from './documents/exec-log-entry.document';
export * from './documents/org.document';
export * from './documents/repository.document';
export { SqliteReadModelStore, type SqliteReadModelStoreOptions } from './sqlite/sqlite-read-model-store';
export { MongoReadModelStore } from './mongodb/mongo-read-model-store';
