import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pollUntil } from '../support/poll-until';

/**
 * A VM whose state forbids an operation right now — booting (with skip_wait_boot=true), a commit
 * in progress, being deleted, dead — answers 409 saying why; branch/by_vm answers it in the
 * contract's hybrid body `{vms, error}`. The in-memory driver holds a VM in each state (slow
 * operations, a machine lost behind the control plane's back); the answers are the API's alone.
 */
describe('operations on a busy VM answer 409 (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    arbor = await startTestArbor({ driver, env: { ARBOR_RESYNC_INTERVAL_MS: '200' } });
  });
  afterAll(() => arbor.destroy());

  const newVm = async (query = '?wait_boot=true') => (await arbor.request('POST', `/api/v1/vm/new_root${query}`, { body: { vm_config: {} } })).json.vm_id as string;
  const eventTypes = async (vm: string) => (await arbor.request('GET', `/api/v1/vm/${vm}/events`)).json.map((e: { type: string }) => e.type) as string[];
  const answer = async (method: string, path: string, body?: unknown) => {
    const res = await arbor.request(method, path, { body });
    return { status: res.status, body: res.json };
  };

  it('booting, with skip_wait_boot=true: PATCH disk, DELETE and branch/by_vm refuse at once', async () => {
    driver.slowDown('create', 1500);
    try {
      const vm = await newVm('');
      expect((await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state).toBe('booting');
      const refused = { status: 409, body: { error: 'vm is still booting', success: false } };
      expect(await answer('PATCH', `/api/v1/vm/${vm}/disk?skip_wait_boot=true`, { fs_size_mib: 4096 })).toEqual(refused);
      expect(await answer('DELETE', `/api/v1/vm/${vm}?skip_wait_boot=true`)).toEqual(refused);
      expect(await answer('POST', `/api/v1/vm/branch/by_vm/${vm}?skip_wait_boot=true`)).toEqual({ status: 409, body: { vms: [], error: 'vm is still booting' } });
      // Nothing was asked of the VM: its log holds only the creation (and, by now perhaps, the boot).
      expect((await eventTypes(vm)).filter((type) => type.endsWith('Requested'))).toEqual(['VmCreationRequested']);
    } finally {
      driver.slowDown('create', 0);
    }
  });

  it('a commit in progress: branch/by_vm answers 409 with the hybrid body', async () => {
    const vm = await newVm();
    driver.slowDown('commit', 1500);
    try {
      const commit = arbor.request('POST', `/api/v1/vm/${vm}/commit`);
      await pollUntil(async () => (await eventTypes(vm)).includes('VmCommitRequested'));
      const branch = await answer('POST', `/api/v1/vm/branch/by_vm/${vm}`);
      expect(branch).toEqual({ status: 409, body: { vms: [], error: 'vm has a commit in progress; try again when it completes' } });
      expect((await commit).status).toBe(201);
    } finally {
      driver.slowDown('commit', 0);
    }
    // Once the commit is done the same branch goes through.
    expect((await arbor.request('POST', `/api/v1/vm/branch/by_vm/${vm}`)).status).toBe(201);
  });

  it('being deleted: branch/by_vm answers 409 with the hybrid body', async () => {
    const vm = await newVm();
    driver.slowDown('destroy', 1500);
    try {
      const deletion = arbor.request('DELETE', `/api/v1/vm/${vm}`);
      await pollUntil(async () => (await eventTypes(vm)).includes('VmDeletionRequested'));
      expect(await answer('POST', `/api/v1/vm/branch/by_vm/${vm}`)).toEqual({ status: 409, body: { vms: [], error: 'vm is being deleted' } });
      expect((await deletion).status).toBe(200);
    } finally {
      driver.slowDown('destroy', 0);
    }
  });

  it('dead: branch/by_vm answers 409 with the hybrid body, and nothing is committed', async () => {
    const vm = await newVm();
    driver.lose(vm); // the machine vanishes from the host; the worker's resync reports it dead
    await pollUntil(async () => (await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state === 'dead');
    expect(await answer('POST', `/api/v1/vm/branch/by_vm/${vm}?count=2`)).toEqual({ status: 409, body: { vms: [], error: 'vm is dead' } });
    expect(await eventTypes(vm)).not.toContain('VmCommitRequested');
  });
});
