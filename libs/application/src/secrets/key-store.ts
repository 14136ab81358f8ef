import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { DuplicateKeyError, SqliteReadModelStore, type Document, type ReadModelStore } from '@arbor/read-models';
import type { ArborConfig } from '../arbor-config';
import { connectMongoReadModels } from '../distributed-adapters';

/** The embedded key store, in the data directory beside (not inside) the read models: it is no read model. */
export const SECRET_KEYS_DB = 'secret-keys.db';
/** Its collection, also in MongoDB, where `rebuild-read-models` never touches it. */
export const SECRET_KEYS_COLLECTION = 'secret_keys';

/** One of an org's data keys: what its secrets in the log are sealed with. */
export interface OrgKeyRecord extends Document {
  _id: string;
  kind: 'org';
  org_id: string;
  /** The key, wrapped with the secrets key (SecretsKey); null once shredded (the record stays, so a process can tell a shredded key from one its key store never had). */
  wrapped: string | null;
  created_at: string;
  shredded_at: string | null;
}

/** One SSH key generation: the secret the VMs' key pairs derive from. Retired: its secret is gone, its number stays taken. */
export interface SshGenerationRecord extends Document {
  _id: string;
  kind: 'ssh';
  generation: number;
  wrapped: string | null;
  created_at: string;
  retired_at: string | null;
}

/** The fingerprint of the secrets key the store's keys are wrapped with, recorded by the first process that used it. */
export interface SecretsKeyRecord extends Document {
  _id: 'secrets-key';
  kind: 'secrets-key';
  fingerprint: string;
  created_at: string;
}

export type KeyRecord = OrgKeyRecord | SshGenerationRecord | SecretsKeyRecord;

/**
 * Where the keys that make secrets readable live: outside the log, so deleting one makes what it
 * sealed unreadable in every copy of the log (crypto-shredding). Documents in a store of the
 * read-model port's kind, but not a read model (nothing rebuilds them): `<dataDir>/secret-keys.db`
 * (SQLite, 0600) on the embedded stores, the `secret_keys` collection when MONGODB_URL is set, so
 * api replicas and workers on other hosts share it. Opened on first use: a process that never
 * seals or opens a secret never touches it.
 */
export class KeyStore {
  private opened: Promise<ReadModelStore> | null = null;

  constructor(private readonly open: () => Promise<ReadModelStore>) {}

  /** The key store the configuration selects (see the class comment). */
  static forConfig(config: Pick<ArborConfig, 'dataDir' | 'mongoUrl'>): KeyStore {
    if (config.mongoUrl) {
      const url = config.mongoUrl;
      return new KeyStore(() => connectMongoReadModels(url));
    }
    return new KeyStore(async () => {
      mkdirSync(config.dataDir, { recursive: true });
      const file = join(config.dataDir, SECRET_KEYS_DB);
      // Made 0600 before SQLite opens it (its -wal and -shm files take the same mode).
      closeSync(openSync(file, 'a', 0o600));
      return SqliteReadModelStore.open(file);
    });
  }

  /** Adds a record; false when one with its id exists already (the first stands). */
  async insert(record: KeyRecord): Promise<boolean> {
    try {
      await (await this.store()).commit([{ op: 'insertOne', collection: SECRET_KEYS_COLLECTION, doc: record }]);
      return true;
    } catch (error) {
      if (error instanceof DuplicateKeyError) return false;
      throw error;
    }
  }

  async get<R extends KeyRecord>(_id: string): Promise<R | null> {
    return (await this.store()).findOne<R>(SECRET_KEYS_COLLECTION, { _id });
  }

  async find<R extends KeyRecord>(filter: Partial<R> & Record<string, unknown>, sort: Record<string, 1 | -1> = { created_at: 1, _id: 1 }): Promise<R[]> {
    return (await this.store()).find<R>(SECRET_KEYS_COLLECTION, filter, { sort });
  }

  async update(_id: string, fields: Record<string, unknown>): Promise<void> {
    await (await this.store()).commit([{ op: 'updateOne', collection: SECRET_KEYS_COLLECTION, filter: { _id }, update: { $set: fields } }]);
  }

  /** Sets these fields on every record with one of these ids, in one write. */
  async updateMany(ids: string[], fields: Record<string, unknown>): Promise<void> {
    if (ids.length) await (await this.store()).commit([{ op: 'updateMany', collection: SECRET_KEYS_COLLECTION, filter: { _id: { $in: ids } }, update: { $set: fields } }]);
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    if (opened) await (await opened.catch(() => null))?.close();
  }

  private store(): Promise<ReadModelStore> {
    this.opened ??= this.open().then(
      async (store) => {
        await store.ensureIndex(SECRET_KEYS_COLLECTION, { kind: 1, org_id: 1 });
        return store;
      },
      (error) => {
        this.opened = null; // a later use tries again
        throw error;
      },
    );
    return this.opened;
  }
}
