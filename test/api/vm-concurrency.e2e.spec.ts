import { toDomainEvent } from '@arbor/application';
import { vmDecider, type VmEvent, Commit, Vm } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * Conflicting commands on one VM, sent at the same moment: one wins, the other gets a clear 4xx,
 * and the log stays a valid history (it folds without contradiction, and every answer matches it).
 */
describe('concurrent conflicting commands on one VM (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    driver.slowDown('commit', 30);
    driver.slowDown('destroy', 30);
    arbor = await startTestArbor({ driver });
  });
  afterAll(() => arbor.destroy());

  const newVm = () => arbor.bootVm();
  const history = async (vm_id: string) => (await arbor.infra.eventStore.readStream(Vm.stream(vm_id))).map((e) => toDomainEvent<VmEvent>(e));

  it('delete while committing: never both half-done; answers match the log', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const vm = await newVm();
      const [commit, del] = await Promise.all([
        arbor.request('POST', `/api/v1/vm/${vm}/commit`),
        new Promise((r) => setTimeout(r, round * 5)).then(() => arbor.request('DELETE', `/api/v1/vm/${vm}`)),
      ]);
      outcomes.add(`${commit.status}/${del.status}`);
      expect([201, 404, 409]).toContain(commit.status);
      expect([200, 409]).toContain(del.status);
      if (commit.status !== 201) expect(commit.json.error).toMatch(/vm is being deleted|vm not found/);
      if (del.status === 409) expect(del.json.error).toMatch(/commit in progress/);

      const events = await history(vm);
      const state = events.reduce(vmDecider.evolve, vmDecider.initialState());
      expect(state.pending).toBeNull();
      const types = events.map((e) => e.type);
      if (commit.status === 201) {
        expect(types).toContain('VmCommitted');
        const commitStream = await arbor.infra.eventStore.readStream(Commit.stream(commit.json.commit_id));
        expect(commitStream.map((e) => e.type)).toEqual(['CommitCreated']);
      } else {
        expect(types).not.toContain('VmCommitRequested');
      }
      if (del.status === 200) {
        expect(state.lifecycle).toBe('deleted');
        expect(await driver.status(vm)).toBeNull();
        // Nothing happens to a VM after it is deleted.
        expect(types[types.length - 1]).toBe('VmDeleted');
      } else {
        expect(state.lifecycle).toBe('running');
        expect(await driver.status(vm)).toBe('running');
      }
    }
    // At least one round really overlapped (one of the two was refused).
    expect([...outcomes].some((o) => o.includes('409') || o.startsWith('404'))).toBe(true);
  });

  it('pause and resume racing: refused calls say why; the log, the API and the host agree', async () => {
    const vm = await newVm();
    const results = await Promise.all(
      ['Paused', 'Running', 'Paused', 'Paused', 'Running'].map((state) => arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state } })),
    );
    for (const res of results) {
      expect([200, 409]).toContain(res.status);
      if (res.status === 409) expect(res.json.error).toMatch(/in progress/);
    }
    const state = (await history(vm)).reduce(vmDecider.evolve, vmDecider.initialState());
    expect(state.pending).toBeNull();
    const api = (await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state;
    expect(api).toBe(state.lifecycle);
    expect(await driver.status(vm)).toBe(state.lifecycle);
  });

  it('ties a commit request to its outcomes in the feed: one correlation id across streams', async () => {
    const vm = await newVm();
    const { commit_id } = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`, { headers: { 'x-correlation-id': 'a3c1f1d6-5a8e-4a7e-8a0e-2f5d8a9b7c10' } })).json;
    const feed = (await arbor.request('GET', '/api/v1/events?limit=1000')).json.events as { type: string; stream_id: string; event_id: string; metadata: { correlation_id: string; causation_id: string } }[];
    const related = feed.filter((e) => e.metadata.correlation_id === 'a3c1f1d6-5a8e-4a7e-8a0e-2f5d8a9b7c10');
    // The org's commit storage: reserved before the request, measured once the commit is taken.
    expect(related.map((e) => `${e.stream_id.split('-')[0]}:${e.type}`)).toEqual([
      'usage:CommitStorageReserved',
      'vm:VmCommitRequested',
      'usage:CommitStorageMeasured',
      'commit:CommitCreated',
      'vm:VmCommitted',
    ]);
    const [, requested, measured, created, committed] = related;
    expect(created.stream_id).toBe(`commit-${commit_id}`);
    for (const outcome of [measured, created, committed]) expect(outcome.metadata.causation_id).toBe(requested.event_id);
  });
});

describe('booting VMs and partial branch failures (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    arbor = await startTestArbor({ driver });
  });
  afterAll(() => arbor.destroy());

  it('operations on a booting VM wait for the boot, or answer 409 at once with skip_wait_boot=true', async () => {
    driver.slowDown('create', 400);
    try {
      const vm = (await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: {} } })).json.vm_id;
      expect((await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state).toBe('booting');
      const refused = await arbor.request('PATCH', `/api/v1/vm/${vm}/state?skip_wait_boot=true`, { body: { state: 'Paused' } });
      expect(refused.status).toBe(409);
      expect(refused.json.error).toBe('vm is still booting');
      expect((await arbor.request('POST', `/api/v1/vm/${vm}/commit?skip_wait_boot=true`)).status).toBe(409);
      // Without the flag the call waits for the boot, then does its work.
      expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Paused' } })).status).toBe(200);
      expect((await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state).toBe('paused');
    } finally {
      driver.slowDown('create', 0);
    }
  });

  it('a branch that fails part-way answers the hybrid body listing the VMs created so far', async () => {
    const parent = await arbor.bootVm();
    driver.failNext('start', 'out of memory on the host', 1); // the second child fails to start
    const res = await arbor.request('POST', `/api/v1/vm/branch/by_vm/${parent}?count=3`);
    expect(res.status).toBe(500);
    expect(Object.keys(res.json).sort()).toEqual(['error', 'vms']);
    expect(res.json.vms).toHaveLength(1);
    expect(res.json.error).toContain('out of memory on the host');
    const child = res.json.vms[0].vm_id;
    expect((await arbor.request('GET', `/api/v1/vm/${child}/status`)).json.state).toBe('running');

    // The child that failed to boot was cleaned up: gone from the host and the lists, deleted in
    // the log with the reason kept, so the body's `vms` describes every VM the branch left behind.
    const failure = (await arbor.infra.eventStore.readAll()).filter((e) => e.type === 'VmBootFailed').pop()!;
    const failed = (failure.data as { vm_id: string; reason: string }).vm_id;
    expect((failure.data as { reason: string }).reason).toBe('out of memory on the host');
    expect(await driver.status(failed)).toBeNull();
    const listed = (await arbor.request('GET', '/api/v1/vms')).json.map((vm: { vm_id: string }) => vm.vm_id);
    expect(listed).toEqual(expect.arrayContaining([parent, child]));
    expect(listed).not.toContain(failed);
    expect((await arbor.request('GET', `/api/v1/vm/${failed}/status`)).status).toBe(404);
    const metadata = await arbor.request('GET', `/api/v1/vm/${failed}/metadata`);
    expect(metadata.status).toBe(200);
    expect(metadata.json.deleted_at).toEqual(expect.any(String));

    // Only the child that exists holds the branch's commit; once it is deleted, so can the commit be.
    const commit = (await arbor.request('GET', '/api/v1/commits')).json.commits.find((c: { parent_vm_id: string }) => c.parent_vm_id === parent);
    const held = await arbor.request('DELETE', `/api/v1/commits/${commit.commit_id}`);
    expect(held.status).toBe(409);
    expect(held.json.error).toBe('commit still has 1 active VM(s)');
    expect((await arbor.request('DELETE', `/api/v1/vm/${child}`)).status).toBe(200);
    expect((await arbor.request('DELETE', `/api/v1/commits/${commit.commit_id}`)).status).toBe(204);
  });

  it('a branch of a missing VM answers 404 with the hybrid body; by_commit answers a plain error', async () => {
    const missing = '00000000-0000-4000-8000-00000000000f';
    expect((await arbor.request('POST', `/api/v1/vm/branch/by_vm/${missing}`)).json).toEqual({ vms: [], error: 'vm not found' });
    expect((await arbor.request('POST', `/api/v1/vm/branch/by_commit/${missing}`)).json).toEqual({ error: 'commit not found', success: false });
    expect((await arbor.request('POST', `/api/v1/vm/${missing}/branch`)).json).toEqual({ error: 'commit not found', success: false });
    expect((await arbor.request('POST', '/api/v1/vm/branch/by_ref/myrepo/v1')).json).toEqual({ vms: [], error: 'repository not found' });
    expect((await arbor.request('POST', `/api/v1/vm/branch/by_commit/${missing}?count=256`)).status).toBe(400);
  });
});
