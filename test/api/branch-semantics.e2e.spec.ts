import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * What a branch means, proven through HTTP on the sandbox driver: children see what their parent
 * committed, not what came later; siblings diverge; processes start fresh (and the API says so).
 */
describe('commit and branch semantics (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let parent: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    parent = await arbor.bootVm();
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const sh = async (vm: string, script: string) => {
    const res = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: ['sh', '-c', script] } });
    expect(res.status).toBe(200);
    return res.json as { exit_code: number; stdout: string; stderr: string };
  };

  it('children see the committed files, not later ones; siblings diverge', async () => {
    await sh(parent, 'echo one > /state.txt');
    const early = (await arbor.request('POST', `/api/v1/vm/${parent}/commit`)).json.commit_id;
    await sh(parent, 'echo two > /state.txt; echo later > /later.txt');
    const branched = await arbor.request('POST', `/api/v1/vm/branch/by_vm/${parent}?count=2`);
    expect(branched.status).toBe(201);
    expect(branched.json.vms).toHaveLength(2);
    expect(branched.json.memory_preserved).toBe(false);
    const [a, b] = branched.json.vms.map((v: { vm_id: string }) => v.vm_id);

    for (const child of [a, b]) {
      expect((await arbor.request('GET', `/api/v1/vm/${child}/status`)).json.state).toBe('running');
      expect((await sh(child, 'cat /state.txt /later.txt')).stdout).toBe('two\nlater\n');
    }
    await sh(a, 'echo a > /state.txt');
    await sh(b, 'echo b > /state.txt');
    expect((await sh(a, 'cat /state.txt')).stdout).toBe('a\n');
    expect((await sh(b, 'cat /state.txt')).stdout).toBe('b\n');
    expect((await sh(parent, 'cat /state.txt')).stdout).toBe('two\n');

    const fromEarly = (await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id: early } })).json.vm_id;
    expect((await sh(fromEarly, 'cat /state.txt')).stdout).toBe('one\n');
    expect((await sh(fromEarly, 'test -e /later.txt; echo $?')).stdout).toBe('1\n');
  });

  it('a branch starts fresh processes on the sandbox: a process of the parent is not running in the child', async () => {
    await sh(parent, 'sleep 3600 >/dev/null 2>&1 & echo $! > /sleeper.pid');
    const child = (await arbor.request('POST', `/api/v1/vm/${parent}/branch`)).json.vms[0].vm_id;
    expect((await sh(parent, 'kill -0 $(cat /sleeper.pid) && echo alive')).stdout).toBe('alive\n');
    expect((await sh(child, 'kill -0 $(cat /sleeper.pid) 2>/dev/null && echo alive || echo gone')).stdout).toBe('gone\n');
  });

  it('every child gets its own identity', async () => {
    const { vms } = (await arbor.request('POST', `/api/v1/vm/branch/by_vm/${parent}?count=2`)).json;
    const ids = await Promise.all(vms.map(async (v: { vm_id: string }) => (await sh(v.vm_id, 'cat /etc/machine-id; hostname')).stdout));
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[0]).not.toBe((await sh(parent, 'cat /etc/machine-id; hostname')).stdout);
  });

  it("every child gets its own SSH key, and its guest authorizes that key, not the parent's", async () => {
    const child = (await arbor.request('POST', `/api/v1/vm/branch/by_vm/${parent}`)).json.vms[0].vm_id;
    const dir = mkdtempSync(join(tmpdir(), 'arbor-key-'));
    /** "ssh-ed25519 AAAA…" of the VM's GET ssh_key private key, as ssh-keygen -y derives it. */
    const publicKeyOf = async (vm: string) => {
      const res = await arbor.request('GET', `/api/v1/vm/${vm}/ssh_key`);
      expect(res.status).toBe(200);
      writeFileSync(join(dir, vm), res.json.ssh_private_key, { mode: 0o600 });
      return execFileSync('ssh-keygen', ['-y', '-f', join(dir, vm)], { encoding: 'utf8' }).split(' ').slice(0, 2).join(' ');
    };
    const authorizedIn = async (vm: string) => (await sh(vm, 'cat /root/.ssh/authorized_keys')).stdout.split('\n').filter(Boolean).map((line) => line.split(' ').slice(0, 2).join(' '));
    try {
      const [parentKey, childKey] = [await publicKeyOf(parent), await publicKeyOf(child)];
      expect(childKey).not.toBe(parentKey);
      expect(await authorizedIn(child)).toEqual([childKey]);
      expect(await authorizedIn(parent)).toEqual([parentKey]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resize grows the disk, visible to df in the guest; shrinking is refused', async () => {
    const before = Number((await sh(parent, "df -m / | awk 'NR==2 {print $2}'")).stdout.trim());
    expect((await arbor.request('PATCH', `/api/v1/vm/${parent}/disk`, { body: { fs_size_mib: 2048 } })).status).toBe(200);
    const after = Number((await sh(parent, "df -m / | awk 'NR==2 {print $2}'")).stdout.trim());
    expect(after).toBeGreaterThan(before);
    const shrink = await arbor.request('PATCH', `/api/v1/vm/${parent}/disk`, { body: { fs_size_mib: 512 } });
    expect(shrink.status).toBe(400);
    expect(shrink.json.error).toContain('larger than the current size');
  });
});
