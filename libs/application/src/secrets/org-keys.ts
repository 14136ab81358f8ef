import { randomBytes, randomUUID } from 'node:crypto';
import type { KeyStore, OrgKeyRecord } from './key-store';
import type { SecretsKey } from './secrets-key';

/** A data key, unwrapped, with the id sealed values name it by. */
export interface DataKey {
  key_id: string;
  key: Buffer;
}

/** What an operator sees of a key: never the key. */
export interface OrgKeyInfo {
  key_id: string;
  org_id: string;
  created_at: string;
}

/**
 * The orgs' data keys: each org's secrets in the log (file contents, exec stdin and env, env var
 * values, idempotent responses) are sealed with its newest key. An org gets its first key when it
 * first has a secret to seal; `rotate` gives it a new one for what is sealed from then on (older
 * values still open with the older keys); `shred` deletes all of them, and everything they sealed
 * becomes unreadable wherever the log was copied. Keys are read from the store each time, never
 * cached, so a shredded key stops opening in every process at once. A shredded key leaves its
 * record behind without the key (a tombstone): a value whose key is shredded is gone, while one
 * whose key this process's store never had is a misconfiguration (a worker not sharing the api's
 * key store), which fails loudly rather than passing for a shredded secret.
 */
export class OrgKeys {
  constructor(
    private readonly store: KeyStore,
    private readonly secretsKey: () => Promise<SecretsKey>,
  ) {}

  /** The org's newest key, made on first use. */
  async sealingKey(org_id: string): Promise<DataKey> {
    const [newest] = await this.store.find<OrgKeyRecord>({ kind: 'org', org_id, shredded_at: null }, { created_at: -1, _id: -1 });
    if (newest?.wrapped) return { key_id: newest._id, key: (await this.secretsKey()).unwrap(newest._id, newest.wrapped) };
    return this.create(org_id);
  }

  /** A key by its id, or null when it was shredded; an error when this key store never had it. */
  async key(key_id: string): Promise<Buffer | null> {
    const record = await this.store.get<OrgKeyRecord>(key_id);
    if (record?.kind !== 'org') {
      throw new Error(`data key ${key_id} is not in this process's key store: every api and worker must share one (MONGODB_URL, or the same data directory)`);
    }
    return record.wrapped ? (await this.secretsKey()).unwrap(record._id, record.wrapped) : null;
  }

  /** A new key for the org: what is sealed from now on uses it; what is sealed already still opens. */
  async rotate(org_id: string): Promise<OrgKeyInfo> {
    const { key_id } = await this.create(org_id);
    return { key_id, org_id, created_at: (await this.store.get<OrgKeyRecord>(key_id))!.created_at };
  }

  /** Deletes every key of the org (their records stay, keyless): what they sealed can never be read again. Returns their ids. */
  async shred(org_id: string): Promise<string[]> {
    const ids = (await this.store.find<OrgKeyRecord>({ kind: 'org', org_id, shredded_at: null })).map((record) => record._id);
    await this.store.updateMany(ids, { wrapped: null, shredded_at: new Date().toISOString() });
    return ids;
  }

  /** The keys that still exist (shredded ones are left out). */
  async list(org_id?: string): Promise<OrgKeyInfo[]> {
    const records = await this.store.find<OrgKeyRecord>(org_id ? { kind: 'org', org_id, shredded_at: null } : { kind: 'org', shredded_at: null });
    return records.map(({ _id, org_id, created_at }) => ({ key_id: _id, org_id, created_at }));
  }

  /**
   * Two processes making an org's first key at once make two; both are kept and both open what
   * they sealed, and the newer one seals from then on.
   */
  private async create(org_id: string): Promise<DataKey> {
    const key_id = randomUUID();
    const key = randomBytes(32);
    const wrapped = (await this.secretsKey()).wrap(key_id, key);
    await this.store.insert({ _id: key_id, kind: 'org', org_id, wrapped, created_at: new Date().toISOString(), shredded_at: null });
    return { key_id, key };
  }
}
