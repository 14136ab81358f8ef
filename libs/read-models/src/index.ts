export * from './read-model-store.port';
export { SqliteReadModelStore, type SqliteReadModelStoreOptions } from './sqlite/sqlite-read-model-store';
