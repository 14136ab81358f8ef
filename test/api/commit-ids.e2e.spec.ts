import { randomUUID } from 'node:crypto';
import { orgCommitId } from '@arbor/domain';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * A client may choose a commit's id. Ids are the org's (commit-id-scoping.e2e.spec.ts: another
 * org's are another matter), so one id asked of two VMs of one org at the same moment goes to
 * exactly one: the other request gets 409 before anything is asked of its VM (no pause, no
 * snapshot, no failure in its log). Sandbox driver.
 */
describe('client-chosen commit ids (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let vms: [string, string];
  let org_id: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    const newVm = () => arbor.bootVm();
    vms = [await newVm(), await newVm()];
    org_id = (await arbor.infra.eventStore.readAll({ max_count: 1000 })).find((e) => e.type === 'OrgCreated')!.metadata.org_id!;
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const vmEvents = async (vm: string) => (await arbor.request('GET', `/api/v1/vm/${vm}/events`)).json as { type: string; data: { commit_id?: string } }[];

  it('two VMs racing for one id: one 201, one 409, and the loser VM was never asked to commit', async () => {
    for (let round = 0; round < 3; round++) {
      const commit_id = randomUUID();
      const answers = await Promise.all(vms.map((vm) => arbor.request('POST', `/api/v1/vm/${vm}/commit`, { body: { commit_id } })));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
      const winner = answers.findIndex((a) => a.status === 201);
      expect(answers[winner].json).toEqual({ commit_id });
      expect(answers[1 - winner].json).toEqual({ error: `commit ${commit_id} already exists`, success: false });

      const loserEvents = await vmEvents(vms[1 - winner]);
      // The log knows the commit by its id in the log, derived from the org and the chosen id.
      expect(loserEvents.filter((e) => e.data.commit_id === orgCommitId(org_id, commit_id))).toEqual([]);
      expect((await vmEvents(vms[winner])).filter((e) => e.data.commit_id === orgCommitId(org_id, commit_id)).length).toBeGreaterThan(0);
      expect(loserEvents.map((e) => e.type)).not.toContain('VmOperationFailed');
      expect((await arbor.request('GET', `/api/v1/vm/${vms[1 - winner]}/status`)).json.state).toBe('running');
      const commit = (await arbor.request('GET', `/api/v1/vm/commits/${commit_id}/parents`)).json[0];
      expect(commit).toMatchObject({ id: commit_id, parent_vm_id: vms[winner] });
    }
  });

  it('an id taken by a commit is refused on every VM, its own included', async () => {
    const commit_id = randomUUID();
    expect((await arbor.request('POST', `/api/v1/vm/${vms[0]}/commit`, { body: { commit_id } })).status).toBe(201);
    for (const vm of vms) {
      const again = await arbor.request('POST', `/api/v1/vm/${vm}/commit`, { body: { commit_id } });
      expect({ status: again.status, body: again.json }).toEqual({ status: 409, body: { error: `commit ${commit_id} already exists`, success: false } });
    }
  });

  it('a retry of the same request (X-Idempotency-Key) is answered with the first result, not a conflict', async () => {
    const commit_id = randomUUID();
    const headers = { 'x-idempotency-key': randomUUID() };
    const first = await arbor.request('POST', `/api/v1/vm/${vms[1]}/commit`, { body: { commit_id }, headers });
    const retry = await arbor.request('POST', `/api/v1/vm/${vms[1]}/commit`, { body: { commit_id }, headers });
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.json).toEqual({ commit_id });
  });
});
