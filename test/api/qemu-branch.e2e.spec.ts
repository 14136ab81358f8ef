import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * On the qemu driver a branch of a running VM keeps its memory: a process started in the parent
 * before the branch is running in every child with the same PID and its in-memory state, and the
 * API says so. (QEMU runs under TCG on machines without usable KVM: seconds per boot.)
 */
describe('branching a running VM on the qemu driver (HTTP)', () => {
  let arbor: TestArbor;
  let parent: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'qemu' } });
    const created = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: { mem_size_mib: 256 } } });
    expect(created.status).toBe(201);
    parent = created.json.vm_id;
  }, 300_000);
  afterAll(() => arbor?.destroy(), 120_000);

  /** Runs a shell script in the guest through the API (POST /vm/{id}/exec), as a client would. */
  const sh = async (vm: string, script: string) => {
    const res = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: ['sh', '-c', script] } });
    expect(res.status).toBe(200);
    expect(res.json.exit_code).toBe(0);
    return (res.json.stdout as string).trim();
  };

  it('children keep the running process: same PID, memory-only counter still counting', async () => {
    // A counter that lives only in the shell's memory, reported to a file every tick.
    await sh(parent, 'nohup sh -c \'i=0; while :; do i=$((i+1)); echo "$$ $i" > /run/tick; sleep 0.2; done\' >/dev/null 2>&1 & echo started');
    await new Promise((r) => setTimeout(r, 1500));
    const [pid, before] = (await sh(parent, 'cat /run/tick')).split(' ');

    const branched = await arbor.request('POST', `/api/v1/vm/branch/by_vm/${parent}?count=2`);
    expect(branched.status).toBe(201);
    expect(branched.json.memory_preserved).toBe(true);
    for (const { vm_id } of branched.json.vms as { vm_id: string }[]) {
      expect((await arbor.request('GET', `/api/v1/vm/${vm_id}/status`)).json.state).toBe('running');
      await new Promise((r) => setTimeout(r, 1000));
      const [childPid, count] = (await sh(vm_id, 'cat /run/tick')).split(' ');
      expect(childPid).toBe(pid);
      expect(Number(count)).toBeGreaterThan(Number(before));
      expect(await sh(vm_id, `kill -0 ${pid} && echo alive`)).toBe('alive');
      // Its own identity all the same.
      expect(await sh(vm_id, 'hostname')).not.toBe(await sh(parent, 'hostname'));
    }
    const commit = (await arbor.request('GET', `/api/v1/vm/${branched.json.vms[0].vm_id}/metadata`)).json.parent_commit_id;
    const listed = (await arbor.request('GET', '/api/v1/commits')).json.commits.find((c: { commit_id: string }) => c.commit_id === commit);
    expect(listed.includes_memory).toBe(true);
  }, 300_000);
});
