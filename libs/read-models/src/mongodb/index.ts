/**
 * The MongoDB adapter, an entry of its own (`@arbor/read-models/mongodb`): its driver takes a
 * fifth of a second to load, so only a process configured with MONGODB_URL loads it
 * (openReadModelStore and the key store import it then).
 */
export { MongoReadModelStore } from './mongo-read-model-store';
