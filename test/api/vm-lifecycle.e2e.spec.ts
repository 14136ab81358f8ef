import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pollUntil } from '../support/poll-until';

/**
 * The first API slice end to end on the real sandbox driver: a VM created through the API is a
 * real isolated machine on this host, and every state change shows on the host too.
 */
describe('VM lifecycle through the API (sandbox driver)', () => {
  let arbor: TestArbor;
  let vmId: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_RESYNC_INTERVAL_MS: '300' } });
  }, 300_000);
  afterAll(() => arbor?.destroy());

  it('creates a running machine with wait_boot=true', async () => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', {
      body: { vm_config: { vcpu_count: 1, mem_size_mib: 256, fs_size_mib: 1024, labels: { env: 'test' } } },
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ vm_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    vmId = res.json.vm_id;

    const status = await arbor.request('GET', `/api/v1/vm/${vmId}/status`);
    expect(status.status).toBe(200);
    expect(status.json).toEqual({ vm_id: vmId, owner_id: arbor.adminKey.slice(0, 36), created_at: expect.any(String), state: 'running', labels: { env: 'test' } });
    expect(await arbor.driver.status(vmId)).toBe('running');
  });

  it('is a real isolated environment: own hostname, PID namespace and root filesystem', async () => {
    const run = async (argv: string[]) => {
      let out = '';
      const result = await arbor.driver.exec(vmId, { argv }, (chunk) => (out += chunk.data.toString()));
      return { out: out.trim(), code: result.exit_code };
    };
    expect((await run(['cat', '/proc/1/cmdline'])).code).toBe(0);
    expect((await run(['sh', '-c', 'echo $$'])).out).not.toBe(String(process.pid));
    expect(Number((await run(['sh', '-c', 'ls /proc | grep -c "^[0-9]"'])).out)).toBeLessThan(10);
    const hostname = (await run(['hostname'])).out;
    expect(hostname).not.toBe(require('node:os').hostname());
    await run(['sh', '-c', 'echo inside > /only-in-this-vm']);
    expect(require('node:fs').existsSync('/only-in-this-vm')).toBe(false);
  });

  it("authorizes the VM's own key pair in the guest: the public half of GET ssh_key's private key", async () => {
    const res = await arbor.request('GET', `/api/v1/vm/${vmId}/ssh_key`);
    expect(res.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'arbor-key-'));
    try {
      writeFileSync(join(dir, 'key'), res.json.ssh_private_key, { mode: 0o600 });
      const publicKey = execFileSync('ssh-keygen', ['-y', '-f', join(dir, 'key')], { encoding: 'utf8' }).split(' ').slice(0, 2).join(' ');
      const authorized = (await arbor.driver.readFile(vmId, '/root/.ssh/authorized_keys')).toString();
      expect(authorized.split(' ').slice(0, 2).join(' ')).toBe(publicKey);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists the VM under /vms and its alias /vm', async () => {
    for (const path of ['/api/v1/vms', '/api/v1/vm']) {
      const res = await arbor.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.json.map((vm: { vm_id: string }) => vm.vm_id)).toContain(vmId);
    }
  });

  it('serves metadata with an IPv6 address and no lineage for a root VM', async () => {
    const res = await arbor.request('GET', `/api/v1/vm/${vmId}/metadata`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ vm_id: vmId, state: 'running', parent_commit_id: null, grandparent_vm_id: null, deleted_at: null });
    expect(res.json.ip).toMatch(/^fd[0-9a-f]{2}:[0-9a-f:]+$/);
    expect(res.json).not.toHaveProperty('labels');
  });

  it('replaces labels (200, empty body) and a read right after sees them', async () => {
    const res = await arbor.request('PATCH', `/api/v1/vm/${vmId}/label`, { body: { labels: { team: 'core' } } });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('content-type')).toBeNull();
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.labels).toEqual({ team: 'core' });
    await arbor.request('PATCH', `/api/v1/vm/${vmId}/label`, { body: { labels: null } });
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.labels).toBeNull();
  });

  it('clears labels when the field is absent, as null does: `{}` and no body at all', async () => {
    for (const body of [{}, undefined]) {
      await arbor.request('PATCH', `/api/v1/vm/${vmId}/label`, { body: { labels: { team: 'core' } } });
      const res = await arbor.request('PATCH', `/api/v1/vm/${vmId}/label`, { body });
      expect({ body, status: res.status, text: res.text }).toEqual({ body, status: 200, text: '' });
      expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.labels).toBeNull();
    }
    expect((await arbor.request('PATCH', `/api/v1/vm/${vmId}/label`, { body: { labels: { n: 1 } } })).status).toBe(422);
  });

  it('pauses the machine on the host (the freezer), and it runs on after resume', async () => {
    await arbor.driver.exec(vmId, { argv: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo $i > /tmp/counter; sleep 0.05; done >/dev/null 2>&1 &'] }, () => {});
    const readCounter = async () => {
      let out = '';
      await arbor.driver.exec(vmId, { argv: ['cat', '/tmp/counter'] }, (c) => (out += c.data.toString()));
      return Number(out.trim());
    };
    await pollUntil(async () => (await readCounter()) > 0);

    const pause = await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Paused' } });
    expect(pause.status).toBe(200);
    expect(pause.text).toBe('');
    expect(pause.headers.get('content-type')).toBeNull();
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('paused');
    expect(await arbor.driver.status(vmId)).toBe('paused');

    const resume = await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Running' } });
    expect({ status: resume.status, text: resume.text, type: resume.headers.get('content-type') }).toEqual({ status: 200, text: '', type: null });
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('running');
    const before = await readCounter();
    await pollUntil(async () => (await readCounter()) > before);
  });

  it('pausing a paused VM is a no-op 200', async () => {
    expect((await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Paused' } })).status).toBe(200);
    expect((await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Paused' } })).status).toBe(200);
    expect((await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Running' } })).status).toBe(200);
  });

  it('deletes: 200 {vm_id}, the machine is gone from the host, metadata keeps deleted_at', async () => {
    const res = await arbor.request('DELETE', `/api/v1/vm/${vmId}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ vm_id: vmId });
    expect(await arbor.driver.status(vmId)).toBeNull();
    expect((await arbor.request('GET', '/api/v1/vms')).json.map((vm: { vm_id: string }) => vm.vm_id)).not.toContain(vmId);
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).status).toBe(404);
    const metadata = await arbor.request('GET', `/api/v1/vm/${vmId}/metadata`);
    expect(metadata.status).toBe(200);
    expect(metadata.json.deleted_at).toEqual(expect.any(String));
    expect((await arbor.request('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(403);
  });

  it('without wait_boot answers at once with a booting VM that becomes running', async () => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: {} } });
    expect(res.status).toBe(201);
    const id = res.json.vm_id;
    const first = await arbor.request('GET', `/api/v1/vm/${id}/status`);
    expect(['booting', 'running']).toContain(first.json.state);
    await pollUntil(async () => (await arbor.request('GET', `/api/v1/vm/${id}/status`)).json.state === 'running');
    // A delete right after creation waits for the boot, then destroys the machine.
    expect((await arbor.request('DELETE', `/api/v1/vm/${id}`)).status).toBe(200);
    expect(await arbor.driver.status(id)).toBeNull();
  });

  it('a VM whose machine dies on the host is reported dead, and can still be deleted', async () => {
    const id = await arbor.bootVm();
    await arbor.driver.destroy(id); // the machine vanishes behind the control plane's back
    await pollUntil(async () => (await arbor.request('GET', `/api/v1/vm/${id}/status`)).json.state === 'dead');
    const events = (await arbor.request('GET', `/api/v1/vm/${id}/events`)).json.map((e: { type: string }) => e.type);
    expect(events).toContain('VmDied');
    expect((await arbor.request('PATCH', `/api/v1/vm/${id}/state`, { body: { state: 'Paused' } })).json).toEqual({ error: 'vm is dead', success: false });
    const branch = await arbor.request('POST', `/api/v1/vm/branch/by_vm/${id}`);
    expect({ status: branch.status, body: branch.json }).toEqual({ status: 409, body: { vms: [], error: 'vm is dead' } });
    expect((await arbor.request('DELETE', `/api/v1/vm/${id}`)).status).toBe(200);
  });
});
