import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Vm } from '@arbor/domain';
import { runAdmin } from '../../apps/admin/src/run-admin';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * The SSH key secret rotated without locking anyone out (sandbox driver, so the guest's
 * authorized_keys is real): a VM keeps the key generation it was made with until it is re-keyed,
 * new VMs get the current one, and an old generation is retired once no VM needs it.
 */
describe('SSH key generations: rotate, re-key, retire (HTTP + operator commands, sandbox driver)', () => {
  let arbor: TestArbor;
  let keyDir: string;
  const admin = async (...argv: string[]) => {
    const out: string[] = [];
    await runAdmin(argv, arbor.infra, { line: (line) => out.push(line) });
    return out;
  };
  const sshKey = (vm: string) => arbor.request('GET', `/api/v1/vm/${vm}/ssh_key`);
  /** What `ssh-keygen -y` derives from a private key: "ssh-ed25519 AAAA…". */
  const publicKeyOf = (privateKey: string) => {
    const file = join(keyDir, randomUUID());
    writeFileSync(file, privateKey, { mode: 0o600 });
    return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).split(' ').slice(0, 2).join(' ');
  };
  /** The keys the guest's sshd would accept for root: its authorized_keys, read in the guest. */
  const authorizedIn = async (vm: string) => {
    let out = '';
    await arbor.driver.exec(vm, { argv: ['cat', '/root/.ssh/authorized_keys'] }, (chunk) => (out += chunk.data.toString()));
    return out.split('\n').filter(Boolean).map((line) => line.split(' ').slice(0, 2).join(' '));
  };
  /** The VM's key as GET ssh_key answers it, checked to be one its guest accepts. */
  const acceptedKey = async (vm: string) => {
    const res = await sshKey(vm);
    expect(res.status).toBe(200);
    const publicKey = publicKeyOf(res.json.ssh_private_key);
    expect(await authorizedIn(vm)).toContain(publicKey);
    return publicKey;
  };
  const generationOf = async (vm: string) => (await arbor.infra.readModels.findOne('vms', { _id: vm }))!.ssh_key_generation;
  const setState = (vm: string, state: 'Paused' | 'Running') => arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state } });

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    keyDir = mkdtempSync(join(tmpdir(), 'arbor-ssh-rotation-'));
  }, 300_000);
  afterAll(async () => {
    await arbor?.destroy();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('keeps old VMs on their generation across a rotation, re-keys them, and retires the old one only once none needs it', async () => {
    const [before, paused] = [await arbor.bootVm({ mem_size_mib: 256 }), await arbor.bootVm({ mem_size_mib: 256 })];
    const beforeKey = await acceptedKey(before);
    const pausedKey = await acceptedKey(paused);
    expect(await generationOf(before)).toBe(1);

    expect(await admin('ssh-keys', 'rotate')).toEqual([expect.stringMatching(/^SSH key generation 2 started/)]);

    // A VM made before the rotation still answers its key, and its guest still accepts it.
    expect(await acceptedKey(before)).toBe(beforeKey);
    // One made after it gets the new generation: its own key, recorded in its events.
    const after = await arbor.bootVm({ mem_size_mib: 256 });
    await acceptedKey(after);
    const created = (await arbor.infra.eventStore.readStream(Vm.stream(after)))[0];
    expect(created.data).toMatchObject({ ssh_key_generation: 2 });
    expect(await admin('ssh-keys', 'list')).toEqual([
      expect.stringMatching(/^generation 1 {2}created \S+ {2}2 VM\(s\)$/),
      expect.stringMatching(/^generation 2 \(current\) {2}created \S+ {2}1 VM\(s\)$/),
    ]);

    // Not retired while VMs still have its key.
    await expect(admin('ssh-keys', 'retire', '1')).rejects.toThrow(new RegExp(`2 VM\\(s\\) still have a key of generation 1 \\(.*${before}.*\\): re-key them first`));

    // Re-keying: the running VM gets a key of the current generation, the paused one is left as it is.
    expect((await setState(paused, 'Paused')).status).toBe(200);
    const rekeyed = await admin('ssh-keys', 'rekey');
    expect(rekeyed).toEqual(
      expect.arrayContaining([
        `vm ${before} (org ${created.metadata.org_id}): re-keyed from generation 1 to 2`,
        expect.stringMatching(new RegExp(`^vm ${paused} .*not re-keyed, still generation 1: vm is paused; resume it to re-key it$`)),
        '1 of 2 VM(s) re-keyed to generation 2',
      ]),
    );
    const newKey = await acceptedKey(before);
    expect(newKey).not.toBe(beforeKey);
    expect(await authorizedIn(before)).not.toContain(beforeKey); // the old key no longer opens it
    expect(await generationOf(before)).toBe(2);

    // Forced past the paused VM: its old key is no longer handed out, it is re-keyed once running.
    await admin('ssh-keys', 'retire', '1', '--force');
    expect((await setState(paused, 'Running')).status).toBe(200);
    const refused = await sshKey(paused);
    expect({ status: refused.status, error: refused.json.error }).toEqual({ status: 409, error: expect.stringContaining('key generation 1, which the operator retired') });
    expect(await authorizedIn(paused)).toContain(pausedKey); // the guest still has it: only the operator's copy is gone
    await admin('ssh-keys', 'rekey', '--vm', paused);
    expect(await acceptedKey(paused)).not.toBe(pausedKey);
    expect(await acceptedKey(before)).toBe(newKey);
  }, 240_000);
});
