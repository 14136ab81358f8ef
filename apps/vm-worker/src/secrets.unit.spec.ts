import { randomUUID } from 'node:crypto';
import { Exec, execKey, GuestFile, Vm, VM_CONFIG_DEFAULTS, toFileChunks } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { WorkerTestBed } from './testing/worker-test-bed';

const now = () => new Date().toISOString();
const AUTHORIZED_KEYS = '/root/.ssh/authorized_keys';

/**
 * The worker's side of the secrets: it opens what it must hand the machine in clear (a new VM's
 * env vars, an exec's stdin and env, a file's content), treats what was shredded before it got to
 * it as gone, and re-keys a guest by rewriting its own line of authorized_keys.
 */
describe('vm-worker and secrets', () => {
  let bed: WorkerTestBed;
  let driver: InMemoryDriver;

  beforeEach(() => {
    bed = new WorkerTestBed();
    driver = new InMemoryDriver();
  });
  afterEach(() => bed.destroy());

  it('boots a VM with its env vars in clear, though the log holds them sealed', async () => {
    const vm = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    expect(JSON.stringify(await bed.store.readStream(Vm.stream(vm)))).not.toContain('"A":"1"');
    expect((await driver.readFile(vm, '/etc/environment')).toString()).toBe('A=1\n');
  });

  it('boots without the env vars, fails the exec and the file write whose secrets were shredded before it got to them', async () => {
    const vm = randomUUID();
    await bed.requestVm(vm);
    const exec_id = randomUUID();
    await bed.exec(exec_id, { type: 'RequestExec', exec_id, vm_id: vm, org_id: 'org-1', command: ['true'], env: null, working_dir: null, stdin: 'secret', timeout_secs: 0, now: now() });
    const op_id = randomUUID();
    const [chunk] = toFileChunks(Buffer.from('secret file'));
    await bed.guestFile(op_id, { type: 'AddFileChunk', op_id, index: 0, data_b64: chunk });
    await bed.guestFile(op_id, { type: 'RequestFileWrite', op_id, vm_id: vm, org_id: 'org-1', path: '/root/f', mode: 0o600, create_dirs: false, size: 11, chunk_count: 1 });
    await bed.secrets.orgKeys.shred('org-1');

    await bed.start(driver);
    await bed.settle();

    expect((await driver.readFile(vm, '/etc/environment')).toString()).toBe('');
    expect((await bed.store.readStream(Exec.stream(execKey('org-1', exec_id)))).at(-1)).toMatchObject({
      type: 'ExecFailed',
      data: { reason: "the exec's stdin can no longer be read: the org's secrets key was deleted" },
    });
    expect((await bed.store.readStream(GuestFile.stream(op_id))).at(-1)).toMatchObject({ type: 'FileOperationFailed', data: { kind: 'other' } });
    await expect(driver.readFile(vm, '/root/f')).rejects.toThrow(/no such file/);
  });

  it("re-keys a guest: its own key line is replaced, keys its users added stay", async () => {
    const vm = randomUUID();
    const oldKey = `ssh-ed25519 AAAAold arbor-vm-${vm}`;
    const newKey = `ssh-ed25519 AAAAnew arbor-vm-${vm}`;
    const create = { type: 'RequestVmCreation' as const, vm_id: vm, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: now() };
    await bed.start(driver);
    await bed.vm(vm, { ...create, ssh_public_key: oldKey, ssh_key_generation: 1 });
    await bed.settle();
    await driver.writeFile(vm, AUTHORIZED_KEYS, Buffer.from(`ssh-ed25519 AAAAmine me@laptop\n${oldKey}\n`));

    await bed.vm(vm, { type: 'RequestVmSshKeyRotation', ssh_public_key: newKey, ssh_key_generation: 2 });
    await bed.settle();

    expect((await driver.readFile(vm, AUTHORIZED_KEYS)).toString()).toBe(`ssh-ed25519 AAAAmine me@laptop\n${newKey}\n`);
    expect((await bed.store.readStream(Vm.stream(vm))).at(-1)).toMatchObject({ type: 'VmSshKeyRotated', data: { ssh_public_key: newKey, ssh_key_generation: 2 } });
    expect((await bed.aggregates.load(Vm, vm)).state).toMatchObject({ ssh_public_key: newKey, ssh_key_generation: 2, pending: null });
  });
});
