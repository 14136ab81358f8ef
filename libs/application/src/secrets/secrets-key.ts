import { createHmac } from 'node:crypto';
import { loadServerSecret } from '../server-secret';
import { decrypt, encrypt } from './aead';

const SOURCE = { env: 'ARBOR_SECRETS_KEY', file: 'secrets-key' };

/**
 * The installation's key-encryption key: every key the key store holds (the orgs' data keys, the
 * SSH key generations) is stored wrapped with it, so a copy of the key store (a MongoDB dump, a
 * backup of secret-keys.db) opens nothing without it. ARBOR_SECRETS_KEY (hex, at least 32 bytes),
 * or the file ARBOR_SECRETS_KEY_FILE names, or else `<dataDir>/secrets-key`, made on first use.
 * Every process that seals or opens secrets (api replicas, workers) must have the same one.
 */
export class SecretsKey {
  /** Names the key without revealing it, so processes can tell they hold the same one. */
  readonly fingerprint: string;

  constructor(private readonly key: Buffer) {
    this.fingerprint = createHmac('sha256', key).update('arbor secrets key fingerprint').digest('hex').slice(0, 16);
  }

  static async load(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<SecretsKey> {
    return new SecretsKey((await loadServerSecret(dataDir, SOURCE, env)).subarray(0, 32));
  }

  /** A key for the key store: base64 of AES-256-GCM, bound to the record it is stored in. */
  wrap(record_id: string, key: Buffer): string {
    return encrypt(this.key, key, `arbor key record ${record_id}`).toString('base64');
  }

  unwrap(record_id: string, wrapped: string): Buffer {
    try {
      return decrypt(this.key, Buffer.from(wrapped, 'base64'), `arbor key record ${record_id}`);
    } catch {
      throw new Error(`key record ${record_id} does not open with this process's secrets key (fingerprint ${this.fingerprint}); every api and worker needs the same ARBOR_SECRETS_KEY`);
    }
  }
}
