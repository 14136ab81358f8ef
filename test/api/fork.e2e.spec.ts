import type { SnapshotMachineSpec } from '@arbor/hypervisor';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

type Org = { key: string; org_id: string; org_name: string };

/** An org with a public repository `app` whose tag `v1` points at a commit of one of its VMs. */
async function publishApp(arbor: TestArbor, owner: Org, prepare?: (vm: string) => Promise<void>): Promise<{ vm: string; commit: string }> {
  const vm = await arbor.bootVm({}, { key: owner.key });
  await prepare?.(vm);
  const commit = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`, { key: owner.key })).json.commit_id as string;
  expect((await arbor.request('POST', '/api/v1/repositories', { key: owner.key, body: { name: 'app' } })).status).toBe(201);
  expect((await arbor.request('POST', '/api/v1/repositories/app/tags', { key: owner.key, body: { tag_name: 'v1', commit_id: commit } })).status).toBe(201);
  expect((await arbor.request('PATCH', '/api/v1/repositories/app/visibility', { key: owner.key, body: { is_public: true } })).status).toBe(204);
  return { vm, commit };
}

const fork = (arbor: TestArbor, key: string, body: Record<string, unknown>) => arbor.request('POST', '/api/v1/repositories/fork', { key, body });

describe('fork (HTTP, sandbox driver): a public tag becomes a VM, a commit and a tag of your own', () => {
  let arbor: TestArbor;
  let publisher: Org;
  let forker: Org;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    publisher = await issueKeyForNewOrg(arbor.infra.eventStore, 'publisher');
    forker = await issueKeyForNewOrg(arbor.infra.eventStore, 'forker');
    await publishApp(arbor, publisher, async (vm) => {
      const put = await arbor.request('PUT', `/api/v1/vm/${vm}/files`, { key: publisher.key, body: { path: '/root/app.txt', content_b64: Buffer.from('published').toString('base64') } });
      expect(put.status).toBe(200);
    });
  }, 300_000);
  afterAll(() => arbor?.destroy());

  it("forks into the caller's org: the VM runs from the source's files with the caller's env vars, its commit and tag are the caller's", async () => {
    expect((await arbor.request('PUT', '/api/v1/env_vars', { key: forker.key, body: { vars: { WHO: 'forker' } } })).status).toBe(200);
    const forked = await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1', repo_name: 'mine' });
    expect(forked.status).toBe(201);
    expect(forked.json).toEqual({ vm_id: expect.any(String), commit_id: expect.any(String), repo_name: 'mine', tag_name: 'v1', reference: 'mine:v1' });
    const { vm_id, commit_id } = forked.json;
    const file = await arbor.request('GET', `/api/v1/vm/${vm_id}/files?path=/root/app.txt`, { key: forker.key });
    expect(Buffer.from(file.json.content_b64, 'base64').toString()).toBe('published');
    expect((await arbor.request('POST', `/api/v1/vm/${vm_id}/exec`, { key: forker.key, body: { command: ['printenv', 'WHO'] } })).json.stdout).toBe('forker\n');
    expect((await arbor.request('GET', '/api/v1/commits', { key: forker.key })).json.commits.map((c: { commit_id: string }) => c.commit_id)).toContain(commit_id);
    expect((await arbor.request('GET', '/api/v1/repositories/mine/tags/v1', { key: forker.key })).json).toMatchObject({ commit_id, reference: 'mine:v1' });
    expect((await arbor.request('GET', '/api/v1/repositories/mine', { key: forker.key })).json.is_public).toBe(false);
    // The fork's reference works like any other of the org's.
    const child = await arbor.request('POST', '/api/v1/vm/from_commit', { key: forker.key, body: { ref: 'mine:v1' } });
    expect(child.status).toBe(201);
    for (const id of [vm_id, child.json.vm_id]) await arbor.request('DELETE', `/api/v1/vm/${id}`, { key: forker.key });
    // Every step is in the log, tied to the request.
    const types = (await arbor.request('GET', '/api/v1/events?limit=1000', { key: forker.key })).json.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['ForkRequested', 'ForkVmStarted', 'ForkCommitted', 'ForkRepositoryReady', 'RepoForked']));
  });

  it('409 when the target tag exists, 404 when the source is missing or not public, before any VM starts', async () => {
    const before = (await arbor.request('GET', '/api/v1/vms', { key: forker.key })).json.length;
    const again = await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1', repo_name: 'mine' });
    expect(again.json).toEqual({ error: "tag 'v1' already exists in repository 'mine'", success: false });
    expect(again.status).toBe(409);
    for (const body of [
      { source_org: 'publisher', source_repo: 'app', source_tag: 'nope' },
      { source_org: 'publisher', source_repo: 'nope', source_tag: 'v1' },
      { source_org: 'nobody', source_repo: 'app', source_tag: 'v1' },
      { source_org: 'forker', source_repo: 'mine', source_tag: 'v1', repo_name: 'other' }, // private
    ]) {
      expect((await fork(arbor, forker.key, body)).json).toEqual({ error: 'public repository tag not found', success: false });
    }
    expect((await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app' })).status).toBe(422);
    expect((await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1', tag_name: 'bad tag' })).status).toBe(400);
    expect((await arbor.request('GET', '/api/v1/vms', { key: forker.key })).json.length).toBe(before);
  });
});

describe('fork (HTTP, machines in memory): a fork that cannot finish removes what it made', () => {
  let arbor: TestArbor;
  let driver: HookOnStart;
  let publisher: Org;
  let forker: Org;

  /** Someone acts while the fork's VM starts (takes its target tag, its commit id): the fork only finds out at a later step. */
  class HookOnStart extends InMemoryDriver {
    beforeStart: (() => Promise<void>) | null = null;
    override async startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec) {
      const hook = this.beforeStart;
      this.beforeStart = null;
      await hook?.();
      return super.startFromSnapshot(snapshot_id, spec);
    }
  }

  beforeAll(async () => {
    driver = new HookOnStart();
    arbor = await startTestArbor({ driver });
    publisher = await issueKeyForNewOrg(arbor.infra.eventStore, 'publisher');
    forker = await issueKeyForNewOrg(arbor.infra.eventStore, 'forker');
    await publishApp(arbor, publisher);
  });
  afterAll(() => arbor.destroy());

  const leftovers = async () => ({
    vms: (await arbor.request('GET', '/api/v1/vms', { key: forker.key })).json.length,
    commits: (await arbor.request('GET', '/api/v1/commits', { key: forker.key })).json.total,
    repositories: (await arbor.request('GET', '/api/v1/repositories', { key: forker.key })).json.repositories.map((r: { name: string }) => r.name),
  });

  it('a VM commit that fails: 500 with the reason; no VM, commit or repository of the fork is left', async () => {
    driver.failNext('commit', 'disk full');
    const failed = await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1' });
    expect(failed.json).toEqual({ error: 'disk full', success: false });
    expect(failed.status).toBe(500);
    expect(await leftovers()).toEqual({ vms: 0, commits: 0, repositories: [] });
    const types = (await arbor.request('GET', '/api/v1/events?limit=1000', { key: forker.key })).json.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['ForkAborted', 'VmDeletionRequested', 'VmDeleted', 'ForkFailed']));
  });

  it('a failed fork into a repository that was there keeps it, empty as it was', async () => {
    expect((await arbor.request('POST', '/api/v1/repositories', { key: forker.key, body: { name: 'empty' } })).status).toBe(201);
    driver.failNext('commit', 'disk full');
    expect((await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1', repo_name: 'empty' })).status).toBe(500);
    expect((await arbor.request('GET', '/api/v1/repositories/empty/tags', { key: forker.key })).json).toEqual({ repository: 'empty', tags: [] });
    expect((await arbor.request('DELETE', '/api/v1/repositories/empty', { key: forker.key })).status).toBe(204);
  });

  it('the target tag taken meanwhile: 409; the fork removes its VM and commit, and keeps the repository that now holds a tag', async () => {
    const mine = (await arbor.request('POST', `/api/v1/vm/${await arbor.bootVm({}, { key: forker.key })}/commit`, { key: forker.key })).json.commit_id;
    expect((await arbor.request('POST', '/api/v1/repositories', { key: forker.key, body: { name: 'app' } })).status).toBe(201);
    driver.beforeStart = async () => {
      const taken = await arbor.request('POST', '/api/v1/repositories/app/tags', { key: forker.key, body: { tag_name: 'v1', commit_id: mine } });
      expect(taken.status).toBe(201);
    };
    const before = await leftovers();
    const failed = await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1' });
    expect(failed.json).toEqual({ error: "tag 'v1' already exists in repository 'app'", success: false });
    expect(failed.status).toBe(409);
    expect(await leftovers()).toEqual(before);
    expect((await arbor.request('GET', '/api/v1/repositories/app/tags/v1', { key: forker.key })).json.commit_id).toBe(mine);
  });

  it("the fork's commit id is its own from the request: another commit of the org cannot take it meanwhile (409), and the fork completes", async () => {
    const vm = await arbor.bootVm({}, { key: forker.key });
    let taking: { status: number; json: unknown } | null = null;
    let forkCommit: string | null = null;
    driver.beforeStart = async () => {
      // The fork's commit id is in the org's feed from its request on; a client may choose commit ids.
      const [requested] = (await arbor.request('GET', '/api/v1/events?type=ForkRequested&limit=1000', { key: forker.key })).json.events.slice(-1);
      forkCommit = requested.data.commit_id as string;
      const taken = await arbor.request('POST', `/api/v1/vm/${vm}/commit`, { key: forker.key, body: { commit_id: forkCommit } });
      taking = { status: taken.status, json: taken.json };
    };
    const forked = await fork(arbor, forker.key, { source_org: 'publisher', source_repo: 'app', source_tag: 'v1', repo_name: 'contested' });
    expect(taking).toEqual({ status: 409, json: { error: `commit ${forkCommit} already exists`, success: false } });
    expect(forked.status).toBe(201);
    expect(forked.json.commit_id).toBe(forkCommit);
    const commits = (await arbor.request('GET', '/api/v1/commits?limit=100', { key: forker.key })).json.commits as { commit_id: string; parent_vm_id: string }[];
    expect(commits.filter((commit) => commit.commit_id === forkCommit)).toEqual([expect.objectContaining({ parent_vm_id: forked.json.vm_id })]);
    for (const id of [vm, forked.json.vm_id]) expect((await arbor.request('DELETE', `/api/v1/vm/${id}`, { key: forker.key })).status).toBe(200);
  });
});
