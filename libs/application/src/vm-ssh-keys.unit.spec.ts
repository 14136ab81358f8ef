import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secrets } from './secrets/secrets';
import { SshKeyGenerationRetired } from './secrets/ssh-key-generations';

/** The public key OpenSSH itself derives from a private key file (`ssh-keygen -y`). */
function publicKeyBySshKeygen(dir: string, privateKey: string): string {
  const file = join(dir, `key-${randomUUID()}`);
  writeFileSync(file, privateKey, { mode: 0o600 });
  return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
}
const typeAndKey = (line: string) => line.split(' ').slice(0, 2).join(' ');

describe('VmSshKeys: every VM its own key pair, from SSH key generations', () => {
  let dir: string;
  const opened: Secrets[] = [];
  /** The secrets of an installation on `dataDir` (its own key store there), as a process opens them. */
  const secretsOf = (dataDir: string, env: NodeJS.ProcessEnv = {}) => {
    const secrets = new Secrets({ dataDir, mongoUrl: null }, env);
    opened.push(secrets);
    return secrets;
  };
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'arbor-ssh-keys-'))));
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((secrets) => secrets.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives a private key that OpenSSH reads back to the same public key', async () => {
    const keys = secretsOf(dir).vmSshKeys;
    const vm = randomUUID();
    const { ssh_public_key, ssh_key_generation } = await keys.forNewVm(vm);
    const privateKey = await keys.privateKeyOpenSsh(vm, ssh_key_generation);
    expect(privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+\n-----END OPENSSH PRIVATE KEY-----\n$/);
    expect(ssh_public_key).toMatch(new RegExp(`^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5[A-Za-z0-9+/=]+ arbor-vm-${vm}$`));
    expect(typeAndKey(publicKeyBySshKeygen(dir, privateKey))).toBe(typeAndKey(ssh_public_key));
  });

  it('gives every VM its own key, the same one each time and after a restart', async () => {
    const keys = secretsOf(dir).vmSshKeys;
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await keys.forNewVm(a)).ssh_public_key).not.toBe((await keys.forNewVm(b)).ssh_public_key);
    expect(await keys.privateKeyOpenSsh(a, 1)).not.toBe(await keys.privateKeyOpenSsh(b, 1));
    expect(await secretsOf(dir).vmSshKeys.privateKeyOpenSsh(a, 1)).toBe(await keys.privateKeyOpenSsh(a, 1));
  });

  it('keeps the generations wrapped in the key store, both files readable by their owner only', async () => {
    await secretsOf(dir).vmSshKeys.forNewVm(randomUUID());
    for (const file of ['secret-keys.db', 'secrets-key']) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    // A fresh installation has no secret from before generations.
    expect(existsSync(join(dir, 'ssh-key-secret'))).toBe(false);
  });

  it('seeds generation 1 with the secret from before generations, so VMs made before keep their keys', async () => {
    const vm = randomUUID();
    const secret = 'ab'.repeat(32);
    writeFileSync(join(dir, 'a-ssh-key-secret'), `${secret}\n`);
    const fromVariable = secretsOf(join(dir, 'a'), { ARBOR_SSH_KEY_SECRET: secret }).vmSshKeys;
    const fromFile = secretsOf(join(dir, 'b'), { ARBOR_SSH_KEY_SECRET_FILE: join(dir, 'a-ssh-key-secret') }).vmSshKeys;
    expect(await fromVariable.privateKeyOpenSsh(vm, 1)).toBe(await fromFile.privateKeyOpenSsh(vm, 1));
    // The very key the single secret gave before generations (computed by that code).
    expect(await fromVariable.publicKey('00000000-0000-4000-8000-000000000001', 1)).toBe(
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM2DKSLYs8QnTUhtU4pTnH2KjWSn5XEAsg0iyaAeaBLj arbor-vm-00000000-0000-4000-8000-000000000001',
    );
    expect(await secretsOf(join(dir, 'c'), { ARBOR_SSH_KEY_SECRET: 'cd'.repeat(32) }).vmSshKeys.publicKey(vm, 1)).not.toBe(await fromVariable.publicKey(vm, 1));
  });

  it('rotates: new VMs get the new generation, a VM of the old one keeps its key until that is retired', async () => {
    const secrets = secretsOf(dir);
    const [before, after] = [randomUUID(), randomUUID()];
    const old = await secrets.vmSshKeys.forNewVm(before);
    expect(old.ssh_key_generation).toBe(1);

    expect(await secrets.sshGenerations.rotate()).toBe(2);
    const fresh = await secrets.vmSshKeys.forNewVm(after);
    expect(fresh.ssh_key_generation).toBe(2);
    expect(await secrets.vmSshKeys.publicKey(before, 1)).toBe(old.ssh_public_key);
    expect(await secrets.vmSshKeys.publicKey(before, 2)).not.toBe(old.ssh_public_key); // its re-key

    await expect(secrets.sshGenerations.retire(2)).rejects.toThrow('generation 2 is the current one: rotate first');
    await secrets.sshGenerations.retire(1);
    await expect(secrets.vmSshKeys.privateKeyOpenSsh(before, 1)).rejects.toBeInstanceOf(SshKeyGenerationRetired);
    expect(await secretsOf(dir).sshGenerations.list()).toEqual([
      { generation: 1, created_at: expect.any(String), retired_at: expect.any(String), current: false },
      { generation: 2, created_at: expect.any(String), retired_at: null, current: true },
    ]);
  });

  it('refuses a secret that is not hex or too short', async () => {
    await expect(secretsOf(dir, { ARBOR_SSH_KEY_SECRET: 'not-hex' }).vmSshKeys.forNewVm(randomUUID())).rejects.toThrow(/ARBOR_SSH_KEY_SECRET must be at least 32 bytes as hex/);
    await expect(secretsOf(join(dir, 'x'), { ARBOR_SECRETS_KEY: 'ab'.repeat(16) }).vmSshKeys.forNewVm(randomUUID())).rejects.toThrow(/ARBOR_SECRETS_KEY must be at least 32 bytes/);
  });

  it('refuses to work with a secrets key other than the one the key store was made with', async () => {
    await secretsOf(dir, { ARBOR_SECRETS_KEY: 'ab'.repeat(32) }).vmSshKeys.forNewVm(randomUUID());
    await expect(secretsOf(dir, { ARBOR_SECRETS_KEY: 'cd'.repeat(32) }).vmSshKeys.forNewVm(randomUUID())).rejects.toThrow(
      /is not the one the key store's keys are wrapped with .*give every api and worker the same ARBOR_SECRETS_KEY/,
    );
  });
});
