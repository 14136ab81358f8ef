import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/** GET /vm/{id}/ssh_key: every VM's own Ed25519 key, as OpenSSH reads it. */
describe('per-VM SSH keys (HTTP)', () => {
  let arbor: TestArbor;
  let keyDir: string;
  const newVm = () => arbor.bootVm();
  const sshKey = (vm: string, key?: string) => arbor.request('GET', `/api/v1/vm/${vm}/ssh_key`, { key });
  /** What `ssh-keygen -y` derives from the private key: "ssh-ed25519 AAAA…". */
  const publicKeyOf = (privateKey: string) => {
    const file = join(keyDir, randomUUID());
    writeFileSync(file, privateKey, { mode: 0o600 });
    return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).split(' ').slice(0, 2).join(' ');
  };

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    keyDir = mkdtempSync(join(tmpdir(), 'arbor-ssh-'));
  });
  afterAll(async () => {
    await arbor?.destroy();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('answers an OpenSSH Ed25519 private key and port 22', async () => {
    const res = await sshKey(await newVm());
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['ssh_port', 'ssh_private_key']);
    expect(res.json.ssh_port).toBe(22);
    expect(res.json.ssh_private_key).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END OPENSSH PRIVATE KEY-----\n$/);
    expect(publicKeyOf(res.json.ssh_private_key)).toMatch(/^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5\S+$/);
  });

  it('gives each VM its own key, and the same key on every call', async () => {
    const [a, b] = [await newVm(), await newVm()];
    const keyA = (await sshKey(a)).json.ssh_private_key;
    expect((await sshKey(a)).json.ssh_private_key).toBe(keyA);
    const keyB = (await sshKey(b)).json.ssh_private_key;
    expect(publicKeyOf(keyA)).not.toBe(publicKeyOf(keyB));
  });

  it('refuses a paused VM with 409', async () => {
    const vm = await newVm();
    expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Paused' } })).status).toBe(200);
    const res = await sshKey(vm);
    expect(res.status).toBe(409);
    expect(res.json.success).toBe(false);
    expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Running' } })).status).toBe(200);
    expect((await sshKey(vm)).status).toBe(200);
  });

  it("answers a missing, deleted or another org's VM with 404, and a malformed id with 400", async () => {
    const vm = await newVm();
    const other = await issueKeyForNewOrg(arbor.infra.eventStore);
    const foreign = await sshKey(vm, other.key);
    const missing = await sshKey(randomUUID(), other.key);
    expect({ status: foreign.status, body: foreign.json }).toEqual({ status: 404, body: { error: 'vm not found', success: false } });
    expect({ status: missing.status, body: missing.json }).toEqual({ status: foreign.status, body: foreign.json });
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    expect((await sshKey(vm)).status).toBe(404);
    expect((await sshKey('not-a-uuid')).status).toBe(400);
  });
});
