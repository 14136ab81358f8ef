import { InMemoryDriver } from '@arbor/hypervisor';
import { pollUntil } from '../support/poll-until';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * DELETE /commits/{id} racing restores of that commit meet on the commit's stream: either the
 * delete wins and every restore is 404, or restores win and the delete is 409. Never a VM whose
 * snapshot is freed under it.
 */
describe('deleting a commit while it is being restored (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;
  let source: string;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    arbor = await startTestArbor({ driver });
    source = await arbor.bootVm();
  });
  afterAll(() => arbor.destroy());

  const restore = (commit_id: string) => arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id } });
  const newCommit = async () => (await arbor.request('POST', `/api/v1/vm/${source}/commit`)).json.commit_id as string;
  const commitEvents = async (commit_id: string) => (await arbor.infra.eventStore.readStream(`commit-${commit_id}`)).map((e) => e.type);
  /** Runs `during` with the projector stopped, so the read models lag the log as long as it takes. */
  const withReadModelsBehind = async <T>(during: () => Promise<T>): Promise<T> => {
    await arbor.projector.stop();
    try {
      return await during();
    } finally {
      await arbor.projector.start();
    }
  };
  const vmsFrom = async (commit_id: string) => {
    const found: string[] = [];
    for (const vm of (await arbor.request('GET', '/api/v1/vms')).json as { vm_id: string }[]) {
      if ((await arbor.request('GET', `/api/v1/vm/${vm.vm_id}/metadata`)).json.parent_commit_id === commit_id) found.push(vm.vm_id);
    }
    return found.sort();
  };

  it('restores that found the commit in the read models after the log deleted it are refused: 404, no VM left', async () => {
    const commit_id = await newCommit();
    const starts = driver.calls.filter((c) => c.startsWith('start')).length;
    const [del, restores] = await withReadModelsBehind(async () => {
      const del = arbor.request('DELETE', `/api/v1/commits/${commit_id}`);
      await pollUntil(async () => (await commitEvents(commit_id)).includes('CommitDeleted'));
      // The read models still list the commit, so these get past the lookup to the commit stream.
      const restores = Array.from({ length: 4 }, () => restore(commit_id));
      await pollUntil(async () => (await arbor.infra.eventStore.readAll()).filter((e) => e.type === 'VmBootFailed' && (e.data as { reason: string }).reason === `commit ${commit_id} not found`).length === 4);
      return [del, restores] as const;
    });
    expect((await del).status).toBe(204);
    for (const r of await Promise.all(restores)) expect({ status: r.status, body: r.json }).toEqual({ status: 404, body: { error: 'commit not found', success: false } });
    expect(await vmsFrom(commit_id)).toEqual([]);
    expect(driver.calls.filter((c) => c.startsWith('start'))).toHaveLength(starts);
    await pollUntil(async () => (await driver.getSnapshot(commit_id)) === null);
  });

  it('a delete that finds no VM in the read models is still refused while restores hold the commit: 409', async () => {
    const commit_id = await newCommit();
    const [del, restores] = await withReadModelsBehind(async () => {
      const restores = Array.from({ length: 3 }, () => restore(commit_id));
      await pollUntil(async () => (await commitEvents(commit_id)).filter((t) => t === 'CommitUsedByVm').length === 3);
      const del = arbor.request('DELETE', `/api/v1/commits/${commit_id}`);
      // A refusal answers at once; an accepted delete would wait for the read models instead.
      await Promise.race([del, pollUntil(async () => (await commitEvents(commit_id)).includes('CommitDeleted'))]);
      return [del, restores] as const;
    });
    expect(await commitEvents(commit_id)).not.toContain('CommitDeleted');
    const refused = await del;
    expect({ status: refused.status, body: refused.json }).toEqual({ status: 409, body: { error: 'commit still has 3 active VM(s)', success: false } });
    const created = (await Promise.all(restores)).map((r) => {
      expect(r.status).toBe(201);
      return r.json.vm_id as string;
    });
    expect(await vmsFrom(commit_id)).toEqual(created.sort());
    for (const vm_id of created) expect(await driver.status(vm_id)).toBe('running');
    expect(await driver.getSnapshot(commit_id)).not.toBeNull();
  });

  it('free-running race: one side wins each round; the log, the API and the host agree', async () => {
    // Positive: the delete starts that many ms after the restores; negative: before them.
    for (const offsetMs of [-8, -4, -2, -1, 0, 0, 1, 2, 4]) {
      const commit_id = await newCommit();
      const after = (ms: number) => new Promise((r) => setTimeout(r, Math.max(ms, 0)));
      const [del, ...restores] = await Promise.all([
        after(offsetMs).then(() => arbor.request('DELETE', `/api/v1/commits/${commit_id}`)),
        ...Array.from({ length: 6 }, (_, i) => after(-offsetMs + (i % 3)).then(() => restore(commit_id))),
      ]);
      const created = restores.filter((r) => r.status === 201).map((r) => r.json.vm_id as string);

      if (del.status === 204) {
        // Every restore lost, and plainly: the commit is gone.
        for (const r of restores) expect({ status: r.status, body: r.json }).toEqual({ status: 404, body: { error: 'commit not found', success: false } });
        expect((await restore(commit_id)).status).toBe(404);
        await pollUntil(async () => (await driver.getSnapshot(commit_id)) === null);
      } else {
        expect(del.status).toBe(409);
        expect(restores.map((r) => r.status)).toEqual(restores.map(() => 201));
        const held = Number(/^commit still has (\d+) active VM\(s\)$/.exec(del.json.error)?.[1]);
        expect(held).toBeGreaterThanOrEqual(1);
        expect(held).toBeLessThanOrEqual(created.length);
        expect(await driver.getSnapshot(commit_id)).not.toBeNull();
      }
      // Every VM a restore answered for runs on the host, and the list shows exactly those.
      for (const vm_id of created) expect(await driver.status(vm_id)).toBe('running');
      expect(await vmsFrom(commit_id)).toEqual([...created].sort());

      // Once the restored VMs are deleted, the commit can go.
      for (const vm_id of created) expect((await arbor.request('DELETE', `/api/v1/vm/${vm_id}`)).status).toBe(200);
      if (del.status === 409) expect((await arbor.request('DELETE', `/api/v1/commits/${commit_id}`)).status).toBe(204);
    }
    // Which side wins a round is the scheduler's call; both outcomes are forced in the tests above.
  });
});
