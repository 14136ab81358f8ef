import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VmSshKeys } from './vm-ssh-keys';

/** The public key OpenSSH itself derives from a private key file (`ssh-keygen -y`). */
function publicKeyBySshKeygen(dir: string, privateKey: string): string {
  const file = join(dir, `key-${randomUUID()}`);
  writeFileSync(file, privateKey, { mode: 0o600 });
  return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
}
const typeAndKey = (line: string) => line.split(' ').slice(0, 2).join(' ');

describe('VmSshKeys', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'arbor-ssh-keys-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a private key that OpenSSH reads back to the same public key', async () => {
    const keys = await VmSshKeys.load({ dataDir: dir }, {});
    const vm = randomUUID();
    const privateKey = keys.privateKeyOpenSsh(vm);
    expect(privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+\n-----END OPENSSH PRIVATE KEY-----\n$/);
    expect(keys.publicKey(vm)).toMatch(new RegExp(`^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5[A-Za-z0-9+/=]+ arbor-vm-${vm}$`));
    expect(typeAndKey(publicKeyBySshKeygen(dir, privateKey))).toBe(typeAndKey(keys.publicKey(vm)));
  });

  it('gives every VM its own key, the same one each time', async () => {
    const keys = await VmSshKeys.load({ dataDir: dir }, {});
    const [a, b] = [randomUUID(), randomUUID()];
    expect(keys.publicKey(a)).not.toBe(keys.publicKey(b));
    expect(keys.privateKeyOpenSsh(a)).not.toBe(keys.privateKeyOpenSsh(b));
    expect((await VmSshKeys.load({ dataDir: dir }, {})).privateKeyOpenSsh(a)).toBe(keys.privateKeyOpenSsh(a));
  });

  it('keeps a generated secret in the data directory, readable by its owner only', async () => {
    const vm = randomUUID();
    const first = (await VmSshKeys.load({ dataDir: dir }, {})).publicKey(vm);
    const file = join(dir, 'ssh-key-secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    expect((await VmSshKeys.load({ dataDir: dir }, {})).publicKey(vm)).toBe(first);
  });

  it('derives the same keys from the same ARBOR_SSH_KEY_SECRET on any replica, and other keys from another', async () => {
    const vm = randomUUID();
    const secret = 'ab'.repeat(32);
    const replicaA = await VmSshKeys.load({ dataDir: join(dir, 'a') }, { ARBOR_SSH_KEY_SECRET: secret });
    const replicaB = await VmSshKeys.load({ dataDir: join(dir, 'b') }, { ARBOR_SSH_KEY_SECRET: secret });
    expect(replicaA.privateKeyOpenSsh(vm)).toBe(replicaB.privateKeyOpenSsh(vm));
    expect((await VmSshKeys.load({ dataDir: dir }, { ARBOR_SSH_KEY_SECRET: 'cd'.repeat(32) })).publicKey(vm)).not.toBe(replicaA.publicKey(vm));
  });

  it('refuses a secret that is not hex or too short', async () => {
    await expect(VmSshKeys.load({ dataDir: dir }, { ARBOR_SSH_KEY_SECRET: 'not-hex' })).rejects.toThrow(/ARBOR_SSH_KEY_SECRET must be at least 32 bytes as hex/);
    await expect(VmSshKeys.load({ dataDir: dir }, { ARBOR_SSH_KEY_SECRET: 'ab'.repeat(16) })).rejects.toThrow(/at least 32 bytes/);
  });
});
