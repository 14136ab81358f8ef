import { join } from 'node:path';
import { type EventStore, SqliteEventStore } from '@arbor/event-store';
import { type ReadModelStore, SqliteReadModelStore } from '@arbor/read-models';
import type { ArborConfig } from './arbor-config';
import { countingAppends } from './counted-appends';
import { connectMongoReadModels, eventStoreDbAt } from './distributed-adapters';
import { checkDataDirectory, privateStoreFile } from './data-directory';
import type { Infrastructure } from './infrastructure';
import { Secrets } from './secrets/secrets';

/** Embedded files in the data directory (both WAL-mode SQLite, safe for several processes; 0600). */
export const EVENTS_DB = 'events.db';
export const READ_MODELS_DB = 'read-models.db';

/**
 * The event store the configuration selects: EventStoreDB when EVENTSTORE_URL is set, else SQLite.
 * Every process opens its event store first, so the data directory, which holds each one's state
 * whichever stores it uses, is checked here (checkDataDirectory: refused when unsafe).
 */
export function openEventStore(config: ArborConfig, log: (line: string) => void = () => {}): EventStore {
  checkDataDirectory(config, log);
  if (config.eventStoreUrl) {
    log(`event store: EventStoreDB at ${redact(config.eventStoreUrl)}`);
    return countingAppends(eventStoreDbAt(config.eventStoreUrl));
  }
  log(`event store: SQLite in ${config.dataDir}`);
  return countingAppends(SqliteEventStore.open(privateStoreFile(join(config.dataDir, EVENTS_DB))));
}

/** The read-model store the configuration selects: MongoDB when MONGODB_URL is set, else SQLite. */
export async function openReadModelStore(config: ArborConfig, log: (line: string) => void = () => {}): Promise<ReadModelStore> {
  if (config.mongoUrl) {
    log(`read models: MongoDB at ${redact(config.mongoUrl)}`);
    return connectMongoReadModels(config.mongoUrl);
  }
  checkDataDirectory(config, log);
  log(`read models: SQLite in ${config.dataDir}`);
  return SqliteReadModelStore.open(privateStoreFile(join(config.dataDir, READ_MODELS_DB)));
}

export async function openInfrastructure(config: ArborConfig, log: (line: string) => void = () => {}): Promise<Infrastructure> {
  return { config, eventStore: openEventStore(config, log), readModels: await openReadModelStore(config, log), secrets: new Secrets(config) };
}

export async function closeInfrastructure(infra: Infrastructure): Promise<void> {
  await Promise.allSettled([infra.eventStore.close(), infra.readModels.close(), infra.secrets.close()]);
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
