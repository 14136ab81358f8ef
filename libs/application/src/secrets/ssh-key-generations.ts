import { randomBytes } from 'node:crypto';
import type { KeyStore, SshGenerationRecord } from './key-store';
import type { SecretsKey } from './secrets-key';

/** What an operator sees of a generation: never its secret. */
export interface SshGenerationInfo {
  generation: number;
  created_at: string;
  retired_at: string | null;
  current: boolean;
}

export class SshKeyGenerationRetired extends Error {
  constructor(readonly generation: number) {
    super(`SSH key generation ${generation} was retired`);
    this.name = 'SshKeyGenerationRetired';
  }
}

const recordId = (generation: number) => `ssh-${generation}`;

/**
 * The secrets every VM's SSH key pair derives from, by generation. A new VM's key comes from the
 * newest live generation, and the VM keeps the generation it was made with (recorded in its
 * events) until it is re-keyed; `rotate` starts a new generation, `retire` deletes an old one's
 * secret (its number stays taken). Kept in the key store, wrapped with the secrets key, so every
 * api replica sees a rotation at once. Generation 1 is seeded on first use from the secret that
 * came before generations (ARBOR_SSH_KEY_SECRET, or `<data dir>/ssh-key-secret`), so the VMs made
 * before keep their keys; a fresh installation's is random.
 */
export class SshKeyGenerations {
  constructor(
    private readonly store: KeyStore,
    private readonly secretsKey: () => Promise<SecretsKey>,
    private readonly firstSecret: () => Promise<Buffer | null>,
  ) {}

  /** The generation new VMs get, and its secret. */
  async current(): Promise<{ generation: number; secret: Buffer }> {
    const live = await this.live();
    if (live) return { generation: live.generation, secret: await this.unwrap(live) };
    if ((await this.store.find<SshGenerationRecord>({ kind: 'ssh' })).length) throw new Error('every SSH key generation is retired');
    await this.insert(1, (await this.firstSecret()) ?? randomBytes(32)); // a concurrent first use may win: its secret stands
    return this.current();
  }

  /** A generation's secret; SshKeyGenerationRetired once retired. */
  async secret(generation: number): Promise<Buffer> {
    if (generation === 1) await this.current(); // seeds generation 1 for VMs made before generations
    const record = await this.store.get<SshGenerationRecord>(recordId(generation));
    if (!record) throw new Error(`no SSH key generation ${generation}`);
    if (!record.wrapped) throw new SshKeyGenerationRetired(generation);
    return this.unwrap(record);
  }

  /** Starts a new generation: VMs made from now on get their key from it. Returns its number. */
  async rotate(): Promise<number> {
    await this.current();
    const [newest] = await this.store.find<SshGenerationRecord>({ kind: 'ssh' }, { generation: -1 });
    const generation = newest.generation + 1;
    if (!(await this.insert(generation, randomBytes(32)))) throw new Error(`SSH key generation ${generation} was started by someone else meanwhile; try again`);
    return generation;
  }

  /** Deletes a generation's secret: the keys it gave can no longer be handed out. The current one cannot be retired. */
  async retire(generation: number): Promise<void> {
    const record = await this.store.get<SshGenerationRecord>(recordId(generation));
    if (!record) throw new Error(`no SSH key generation ${generation}`);
    if (!record.wrapped) return;
    if ((await this.current()).generation === generation) throw new Error(`generation ${generation} is the current one: rotate first`);
    await this.store.update(record._id, { wrapped: null, retired_at: new Date().toISOString() });
  }

  async list(): Promise<SshGenerationInfo[]> {
    const current = (await this.current()).generation;
    const records = await this.store.find<SshGenerationRecord>({ kind: 'ssh' }, { generation: 1 });
    return records.map(({ generation, created_at, retired_at }) => ({ generation, created_at, retired_at, current: generation === current }));
  }

  private async live(): Promise<SshGenerationRecord | null> {
    const [newest] = await this.store.find<SshGenerationRecord>({ kind: 'ssh', retired_at: null }, { generation: -1 });
    return newest ?? null;
  }

  private async insert(generation: number, secret: Buffer): Promise<boolean> {
    const _id = recordId(generation);
    const wrapped = (await this.secretsKey()).wrap(_id, secret);
    return this.store.insert({ _id, kind: 'ssh', generation, wrapped, created_at: new Date().toISOString(), retired_at: null });
  }

  private async unwrap(record: SshGenerationRecord): Promise<Buffer> {
    return (await this.secretsKey()).unwrap(record._id, record.wrapped!);
  }
}
