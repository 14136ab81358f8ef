import type { ArborConfig } from '../arbor-config';
import { existingServerSecret } from '../server-secret';
import { VmSshKeys } from '../vm-ssh-keys';
import { EventSecrets } from './event-secrets';
import { KeyStore, type SecretsKeyRecord } from './key-store';
import { OrgKeys } from './org-keys';
import { SecretsKey } from './secrets-key';
import { SshKeyGenerations } from './ssh-key-generations';

/** The secret the SSH keys derived from before generations: it seeds generation 1. */
const FIRST_SSH_SECRET = { env: 'ARBOR_SSH_KEY_SECRET', file: 'ssh-key-secret' };

/**
 * Everything that keeps secrets out of the log, opened from the configuration: the key store, the
 * secrets key that wraps what it holds, the orgs' data keys, the sealing of events, the SSH key
 * generations. Nothing is read until first used, so a process that never needs a secret (the
 * projector, the webhook deliverer) touches none of it.
 */
export class Secrets {
  readonly keyStore: KeyStore;
  readonly orgKeys: OrgKeys;
  readonly events: EventSecrets;
  readonly sshGenerations: SshKeyGenerations;
  readonly vmSshKeys: VmSshKeys;
  private key: Promise<SecretsKey> | null = null;

  constructor(
    private readonly config: Pick<ArborConfig, 'dataDir' | 'mongoUrl'>,
    private readonly env: NodeJS.ProcessEnv = process.env,
    keyStore: KeyStore = KeyStore.forConfig(config),
  ) {
    this.keyStore = keyStore;
    const secretsKey = () => this.secretsKey();
    this.orgKeys = new OrgKeys(keyStore, secretsKey);
    this.events = new EventSecrets(this.orgKeys);
    this.sshGenerations = new SshKeyGenerations(keyStore, secretsKey, () => existingServerSecret(config.dataDir, FIRST_SSH_SECRET, env));
    this.vmSshKeys = new VmSshKeys(this.sshGenerations);
  }

  /**
   * Loads the secrets key and checks that it is the one the key store's keys are wrapped with
   * (the first process to use the store records its fingerprint): a process given another key
   * fails here, saying so, rather than sealing what nobody else can open. The api calls it at
   * start; everyone else on first use.
   */
  secretsKey(): Promise<SecretsKey> {
    this.key ??= this.loadSecretsKey().catch((error) => {
      this.key = null; // e.g. ARBOR_SECRETS_KEY_FILE not there yet: a later use tries again
      throw error;
    });
    return this.key;
  }

  async close(): Promise<void> {
    await this.keyStore.close();
  }

  private async loadSecretsKey(): Promise<SecretsKey> {
    const key = await SecretsKey.load(this.config.dataDir, this.env);
    const record: SecretsKeyRecord = { _id: 'secrets-key', kind: 'secrets-key', fingerprint: key.fingerprint, created_at: new Date().toISOString() };
    if (!(await this.keyStore.insert(record))) {
      const recorded = (await this.keyStore.get<SecretsKeyRecord>(record._id))!.fingerprint;
      if (recorded !== key.fingerprint) {
        throw new Error(
          `this process's secrets key (fingerprint ${key.fingerprint}) is not the one the key store's keys are wrapped with (${recorded}): ` +
            'give every api and worker the same ARBOR_SECRETS_KEY (or ARBOR_SECRETS_KEY_FILE, or data directory)',
        );
      }
    }
    return key;
  }
}
