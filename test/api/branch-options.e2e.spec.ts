import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/** The branch family's query options: keep_paused and count (0–255). Sandbox driver. */
describe('branch options (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let parent: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    parent = await arbor.bootVm();
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const state = async (vm: string) => (await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state as string;
  const listed = async () => ((await arbor.request('GET', '/api/v1/vms')).json as { vm_id: string }[]).map((vm) => vm.vm_id).sort();

  it.each([
    ['branch/by_vm/{id}', (id: string) => `/api/v1/vm/branch/by_vm/${id}`],
    ['{id}/branch', (id: string) => `/api/v1/vm/${id}/branch`],
  ])('%s with keep_paused=true leaves the parent paused; without it the parent runs on', async (_, path) => {
    const kept = await arbor.request('POST', `${path(parent)}?keep_paused=true`);
    expect(kept.status).toBe(201);
    expect(await state(parent)).toBe('paused');
    expect(await state(kept.json.vms[0].vm_id)).toBe('running');

    expect((await arbor.request('PATCH', `/api/v1/vm/${parent}/state`, { body: { state: 'Running' } })).status).toBe(200);
    expect((await arbor.request('POST', path(parent))).status).toBe(201);
    expect(await state(parent)).toBe('running');
  });

  it('count=0 creates no VM: 201 with an empty list', async () => {
    const commit_id = (await arbor.request('POST', `/api/v1/vm/${parent}/commit`)).json.commit_id;
    const before = await listed();
    for (const path of [`branch/by_vm/${parent}`, `${parent}/branch`, `branch/by_commit/${commit_id}`, `${commit_id}/branch`]) {
      const res = await arbor.request('POST', `/api/v1/vm/${path}?count=0`);
      expect({ path, status: res.status, vms: res.json.vms }).toEqual({ path, status: 201, vms: [] });
    }
    expect(await listed()).toEqual(before);
  });
});
