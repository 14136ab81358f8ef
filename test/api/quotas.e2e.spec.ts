import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';
import { pollUntil } from '../support/poll-until';

const LIMITS = {
  ARBOR_QUOTA_VMS: '3',
  ARBOR_QUOTA_VCPUS: '4',
  ARBOR_QUOTA_MEMORY_MIB: '1024',
  ARBOR_QUOTA_DISK_MIB: '4096',
  ARBOR_QUOTA_COMMIT_MIB: '1000',
  ARBOR_VM_MAX_VCPUS: '2',
  ARBOR_VM_MAX_MEMORY_MIB: '512',
  ARBOR_VM_MAX_DISK_MIB: '2048',
  ARBOR_BRANCH_MAX_COUNT: '2',
  ARBOR_DATA_DISK_FLOOR_MIB: '0',
};
const SMALL = { vcpu_count: 1, mem_size_mib: 128, fs_size_mib: 512 };

type Answer = { status: number; body: unknown };

/**
 * Per-org quotas, per-VM maxima and the branch count through HTTP, on the real stores and the
 * in-memory driver (what is decided is the api's and the log's, not the hypervisor's): a refusal
 * is 403 naming the quota, its limit and the use, appends nothing, and a deleted VM or commit
 * gives its share back. Each case runs in an org of its own.
 */
describe('resource quotas (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    arbor = await startTestArbor({ driver, env: LIMITS });
  });
  afterAll(() => arbor?.destroy());

  const newOrg = async () => (await issueKeyForNewOrg(arbor.infra.eventStore)).key;
  const newOrgWithId = () => issueKeyForNewOrg(arbor.infra.eventStore);
  const call = async (key: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await arbor.request(method, path, { key, body });
    return { status: res.status, body: res.json };
  };
  const newRoot = (key: string, vm_config: Record<string, unknown> = SMALL) => call(key, 'POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config });
  const refused = (message: string) => ({ status: 403, body: { error: message, success: false } });
  /** Runs `act` and checks the log did not move. */
  const appendsNothing = async (act: () => Promise<unknown>) => {
    const before = await arbor.infra.eventStore.headPosition();
    await act();
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  };

  it('VM count: the fourth VM is refused, and a deleted VM gives its slot back', async () => {
    const key = await newOrg();
    const vms: string[] = [];
    for (let i = 0; i < 3; i++) vms.push(((await newRoot(key)).body as { vm_id: string }).vm_id);
    await appendsNothing(async () => expect(await newRoot(key)).toEqual(refused('org quota exceeded: vms limit is 3 VM(s), 3 VM(s) in use, 1 VM(s) more asked')));
    expect((await call(key, 'DELETE', `/api/v1/vm/${vms[0]}`)).status).toBe(200);
    expect((await newRoot(key)).status).toBe(201);
  });

  it.each([
    ['vcpus', { ...SMALL, vcpu_count: 2 }, { ...SMALL, vcpu_count: 1 }, 'org quota exceeded: vcpus limit is 4 vCPU(s), 4 vCPU(s) in use, 1 vCPU(s) more asked'],
    ['memory', { ...SMALL, mem_size_mib: 512 }, SMALL, 'org quota exceeded: memory_mib limit is 1024 MiB, 1024 MiB in use, 128 MiB more asked'],
    ['disk', { ...SMALL, fs_size_mib: 2048 }, SMALL, 'org quota exceeded: disk_mib limit is 4096 MiB, 4096 MiB in use, 512 MiB more asked'],
  ])('%s: two VMs fill the quota, a third is refused, and is let in once one is deleted', async (_, big, small, message) => {
    const key = await newOrg();
    const first = ((await newRoot(key, big)).body as { vm_id: string }).vm_id;
    expect((await newRoot(key, big)).status).toBe(201);
    await appendsNothing(async () => expect(await newRoot(key, small)).toEqual(refused(message)));
    expect((await call(key, 'DELETE', `/api/v1/vm/${first}`)).status).toBe(200);
    expect((await newRoot(key, small)).status).toBe(201);
  });

  it('per-VM maxima: a VM larger than any VM may be is refused, whatever the org holds', async () => {
    const key = await newOrg();
    await appendsNothing(async () => {
      expect(await newRoot(key, { ...SMALL, vcpu_count: 3 })).toEqual(refused('per-VM limit exceeded: vcpu_count may be at most 2, 3 asked'));
      expect(await newRoot(key, { ...SMALL, mem_size_mib: 1024 })).toEqual(refused('per-VM limit exceeded: mem_size_mib may be at most 512, 1024 asked'));
      expect(await newRoot(key, { ...SMALL, fs_size_mib: 4096 })).toEqual(refused('per-VM limit exceeded: fs_size_mib may be at most 2048, 4096 asked'));
    });
    const vm = ((await newRoot(key)).body as { vm_id: string }).vm_id;
    await appendsNothing(async () =>
      expect(await call(key, 'PATCH', `/api/v1/vm/${vm}/disk`, { fs_size_mib: 4096 })).toEqual(refused('per-VM limit exceeded: fs_size_mib may be at most 2048, 4096 asked')),
    );
    expect((await call(key, 'PATCH', `/api/v1/vm/${vm}/disk`, { fs_size_mib: 2048 })).status).toBe(200);
  });

  it('branch count: a request for more VMs than the limit is refused whole, one within it takes every slot at once', async () => {
    const key = await newOrg();
    const vm = ((await newRoot(key)).body as { vm_id: string }).vm_id;
    const commit_id = ((await call(key, 'POST', `/api/v1/vm/${vm}/commit`)).body as { commit_id: string }).commit_id;
    await appendsNothing(async () =>
      expect(await call(key, 'POST', `/api/v1/vm/branch/by_commit/${commit_id}?count=3`)).toEqual(
        refused('branch count limit exceeded: at most 2 VMs per request, 3 asked'),
      ),
    );
    // Two children on top of the one VM: 3 of 3. Then no branch of 2 fits, and none of its children is made.
    expect((await call(key, 'POST', `/api/v1/vm/branch/by_commit/${commit_id}?count=2`)).status).toBe(201);
    const before = (await call(key, 'GET', '/api/v1/vms')).body as unknown[];
    const full = await call(key, 'POST', `/api/v1/vm/branch/by_commit/${commit_id}?count=2`);
    expect(full.status).toBe(403);
    expect(full.body).toMatchObject({ error: 'org quota exceeded: vms limit is 3 VM(s), 3 VM(s) in use, 2 VM(s) more asked' });
    expect((await call(key, 'GET', '/api/v1/vms')).body).toHaveLength(before.length);
  });

  it('concurrent creates racing for the last slots: exactly the quota passes, the rest get 403', async () => {
    const key = await newOrg();
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(key, 'POST', '/api/v1/vm/new_root', { vm_config: SMALL })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    for (const answer of answers.filter((a) => a.status === 403)) expect(answer.body).toMatchObject({ error: expect.stringMatching(/^org quota exceeded: vms limit is 3 VM\(s\)/) });
    expect((await call(key, 'GET', '/api/v1/vms')).body).toHaveLength(3);
  });

  it('another org is not held back by this one', async () => {
    const [a, b] = [await newOrg(), await newOrg()];
    for (let i = 0; i < 3; i++) expect((await newRoot(a)).status).toBe(201);
    expect((await newRoot(a)).status).toBe(403);
    expect((await newRoot(b)).status).toBe(201);
  });

  it("commit storage: a commit reserves its VM's disk and memory until measured, and a deleted commit gives its bytes back", async () => {
    const { key, org_id } = await newOrgWithId();
    // 2048 + 512 MiB may not fit in 1000 MiB: refused before anything is asked of the VM.
    const big = ((await newRoot(key, { vcpu_count: 1, mem_size_mib: 512, fs_size_mib: 2048 })).body as { vm_id: string }).vm_id;
    await appendsNothing(async () =>
      expect(await call(key, 'POST', `/api/v1/vm/${big}/commit`, { commit_id: randomUUID() })).toEqual(
        refused('org quota exceeded: commit_bytes limit is 1000 MiB, 0 bytes in use, 2.5 GiB more asked'),
      ),
    );
    // 512 + 128 MiB fits; once taken, the commit counts for what it holds (the in-memory driver's bytes), not 640 MiB.
    const small = ((await newRoot(key)).body as { vm_id: string }).vm_id;
    const commit_id = ((await call(key, 'POST', `/api/v1/vm/${small}/commit`)).body as { commit_id: string }).commit_id;
    const usage = await usageEvents(org_id);
    expect(usage.map((e) => e.type)).toEqual(expect.arrayContaining(['CommitStorageReserved', 'CommitStorageMeasured']));
    expect(usage.find((e) => e.type === 'CommitStorageReserved')!.data).toMatchObject({ commit_id, bytes: 640 * 1024 * 1024 });
    expect((usage.find((e) => e.type === 'CommitStorageMeasured')!.data as { bytes: number }).bytes).toBeLessThan(1024 * 1024);
    // Measured small, the next commit fits as well.
    expect((await call(key, 'POST', `/api/v1/vm/${small}/commit`)).status).toBe(201);
    expect((await call(key, 'DELETE', `/api/v1/commits/${commit_id}`)).status).toBe(204);
    await pollUntil(async () => (await usageEvents(org_id)).some((e) => e.type === 'CommitStorageReleased' && (e.data as { commit_id: string }).commit_id === commit_id));
  });

  it('a commit refused with 409 (another commit in progress) appends nothing: no id reserved, no storage', async () => {
    const key = await newOrg();
    const vm = ((await newRoot(key)).body as { vm_id: string }).vm_id;
    driver.slowDown('commit', 1500);
    try {
      const first = call(key, 'POST', `/api/v1/vm/${vm}/commit`, { commit_id: randomUUID() });
      await pollUntil(async () => ((await call(key, 'GET', `/api/v1/vm/${vm}/events`)).body as { type: string }[]).some((e) => e.type === 'VmCommitRequested'));
      const chosen = randomUUID();
      await appendsNothing(async () =>
        expect(await call(key, 'POST', `/api/v1/vm/${vm}/commit`, { commit_id: chosen })).toEqual({
          status: 409,
          body: { error: 'vm has a commit in progress; try again when it completes', success: false },
        }),
      );
      expect((await first).status).toBe(201);
      // The id stayed free: the same request once the VM is idle goes through.
      expect(await call(key, 'POST', `/api/v1/vm/${vm}/commit`, { commit_id: chosen })).toEqual({ status: 201, body: { commit_id: chosen } });
    } finally {
      driver.slowDown('commit', 0);
    }
  });

  const usageEvents = async (org_id: string) =>
    (await arbor.infra.eventStore.readStream(`usage-${org_id}`)).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
});

/**
 * The data disk's free-space floor: below it new VMs, branches and commits are refused with 507
 * (nothing appended); what frees space or needs none (reads, exec, delete) goes on. The floor is
 * set above the disk's free space on a restart over the same data directory.
 */
describe('the data disk free-space floor (HTTP)', () => {
  let dataDir: string;
  let arbor: TestArbor | null = null;
  const driver = new InMemoryDriver();

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'arbor-floor-'));
  });
  afterAll(async () => {
    await arbor?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses new VMs, branches and commits with 507 saying so, and lets reads, exec and deletes through', async () => {
    arbor = await startTestArbor({ driver, dataDir, env: { ARBOR_DATA_DISK_FLOOR_MIB: '0' } });
    const vm = await arbor.bootVm();
    const commit_id = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id as string;
    await arbor.stop();

    // A floor no disk here reaches: 1 PiB.
    arbor = await startTestArbor({ driver, dataDir, env: { ARBOR_DATA_DISK_FLOOR_MIB: String(1024 ** 3) } });
    const before = await arbor.infra.eventStore.headPosition();
    const refusals = [
      await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: {} } }),
      await arbor.request('POST', `/api/v1/vm/${vm}/commit`),
      await arbor.request('POST', `/api/v1/vm/branch/by_commit/${commit_id}`),
      await arbor.request('POST', `/api/v1/vm/branch/by_vm/${vm}`),
      await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id } }),
    ];
    for (const refusal of refusals) {
      expect(refusal.status).toBe(507);
      expect(JSON.stringify(refusal.json)).toMatch(/data disk has \d+ MiB free, below the floor of 1073741824 MiB: new VMs, branches and commits are refused/);
    }
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
    expect((await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: ['true'] } })).status).toBe(200);
    expect((await arbor.request('GET', `/api/v1/vm/${vm}/status`)).status).toBe(200);
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
  });
});
