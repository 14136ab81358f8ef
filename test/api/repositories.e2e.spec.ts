import { randomUUID } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/**
 * Repositories, their tags, the public listing and references (`repo:tag`, `org/repo:tag`), with
 * two orgs: a private repository is invisible to the other org, a public one readable without a
 * key and restorable by any org. Machines in memory (the fork saga's real-VM run is in fork.e2e).
 */
describe('repositories (HTTP)', () => {
  let arbor: TestArbor;
  let other: { key: string; org_id: string; org_name: string };
  let vm: string;
  let commitA: string;
  let commitB: string;
  const admin = 'default';

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
    vm = await arbor.bootVm();
    commitA = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id;
    commitB = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id;
  });
  afterAll(() => arbor.destroy());

  const createRepo = (name: string, options: { key?: string; description?: string } = {}) =>
    arbor.request('POST', '/api/v1/repositories', { key: options.key, body: { name, description: options.description } });
  const tagRepo = (repo: string, tag_name: string, commit_id: string, key?: string) =>
    arbor.request('POST', `/api/v1/repositories/${repo}/tags`, { key, body: { tag_name, commit_id } });
  const vmsFrom = async (res: { json: { vms?: { vm_id: string }[]; vm_id?: string } }) => res.json.vms?.map((v) => v.vm_id) ?? [res.json.vm_id!];

  it('creates, lists, gets and deletes repositories of the org; names are unique per org', async () => {
    const created = await createRepo('app', { description: 'the app' });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ repo_id: expect.any(String), name: 'app' });
    expect((await createRepo('app')).status).toBe(409);
    expect((await createRepo('app', { key: other.key })).status).toBe(201); // another org, another namespace
    expect((await arbor.request('GET', '/api/v1/repositories/app')).json).toEqual({
      repo_id: created.json.repo_id,
      name: 'app',
      is_public: false,
      created_at: expect.any(String),
      description: 'the app',
    });
    expect((await arbor.request('GET', '/api/v1/repositories')).json.repositories.map((r: { name: string }) => r.name)).toEqual(['app']);
    expect((await createRepo('scratch')).status).toBe(201);
    expect((await arbor.request('DELETE', '/api/v1/repositories/scratch')).status).toBe(204);
    expect((await arbor.request('GET', '/api/v1/repositories/scratch')).status).toBe(404);
    expect((await arbor.request('DELETE', '/api/v1/repositories/scratch')).status).toBe(404);
    expect((await createRepo('scratch')).status).toBe(201); // a deleted name can be taken again
  });

  it("answers tags named like Object.prototype's members as any other name: missing until made (found by the trust suite's catalogue check)", async () => {
    expect((await createRepo('protos')).status).toBe(201);
    for (const name of ['constructor', '__proto__']) {
      const before = await arbor.infra.eventStore.headPosition();
      const moved = await arbor.request('PATCH', `/api/v1/repositories/protos/tags/${name}`, { body: { commit_id: commitA, description: 'x' } });
      expect({ name, status: moved.status, body: moved.json }).toEqual({ name, status: 404, body: { error: 'tag not found', success: false } });
      expect((await arbor.request('DELETE', `/api/v1/repositories/protos/tags/${name}`)).status).toBe(404);
      expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: `protos:${name}` } })).status).toBe(404);
      expect(await arbor.infra.eventStore.headPosition()).toBe(before);
      expect((await tagRepo('protos', name, commitA)).status).toBe(201);
      expect((await arbor.request('PATCH', `/api/v1/repositories/protos/tags/${name}`, { body: { commit_id: commitB } })).status).toBe(204);
      expect((await arbor.request('GET', `/api/v1/repositories/protos/tags/${name}`)).json).toMatchObject({ tag_name: name, commit_id: commitB });
      expect((await arbor.request('DELETE', `/api/v1/repositories/protos/tags/${name}`)).status).toBe(204);
    }
    expect((await arbor.request('DELETE', '/api/v1/repositories/protos')).status).toBe(204);
  });

  it('refuses bad names with 400, missing fields with 422, no key with 401', async () => {
    expect((await createRepo('no spaces')).json).toEqual({ error: 'name may hold only letters, digits, ".", "_" and "-" (1-64 characters)', success: false });
    expect((await createRepo('x'.repeat(65))).status).toBe(400);
    expect((await arbor.request('POST', '/api/v1/repositories', { body: {} })).status).toBe(422);
    expect((await arbor.request('GET', '/api/v1/repositories', { key: null })).status).toBe(401);
    expect((await arbor.request('PATCH', '/api/v1/repositories/app/visibility', { body: { is_public: 'yes' } })).status).toBe(422);
    expect((await tagRepo('app', 'bad tag', commitA)).status).toBe(400);
    expect((await arbor.request('POST', '/api/v1/repositories/app/tags', { body: { tag_name: 'x', commit_id: 'nope' } })).status).toBe(422);
  });

  it('tags commits in a repository: create, list, get, move, describe, delete', async () => {
    const created = await tagRepo('app', 'v1', commitA);
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ tag_id: expect.any(String), reference: 'app:v1', commit_id: commitA });
    const before = await arbor.infra.eventStore.headPosition();
    expect((await tagRepo('app', 'v1', commitB)).status).toBe(409);
    expect(await arbor.infra.eventStore.headPosition()).toBe(before); // refused before the commit is held
    expect((await tagRepo('missing', 'v1', commitA)).json).toEqual({ error: 'repository not found', success: false });
    expect((await tagRepo('app', 'v2', randomUUID())).json).toEqual({ error: 'commit not found', success: false });
    const tag = (await arbor.request('GET', '/api/v1/repositories/app/tags/v1')).json;
    expect(tag).toEqual({ tag_id: created.json.tag_id, tag_name: 'v1', reference: 'app:v1', commit_id: commitA, created_at: expect.any(String), updated_at: expect.any(String), description: null });
    expect((await arbor.request('PATCH', '/api/v1/repositories/app/tags/v1', { body: {} })).json).toEqual({ error: 'no updates provided', success: false });
    expect((await arbor.request('PATCH', '/api/v1/repositories/app/tags/v1', { body: { commit_id: commitB, description: 'second' } })).status).toBe(204);
    const moved = (await arbor.request('GET', '/api/v1/repositories/app/tags/v1')).json;
    expect(moved).toMatchObject({ commit_id: commitB, description: 'second' });
    expect(moved.updated_at > tag.updated_at || moved.updated_at === tag.updated_at).toBe(true);
    expect((await arbor.request('PATCH', '/api/v1/repositories/app/tags/missing', { body: { description: 'x' } })).status).toBe(404);
    expect((await arbor.request('GET', '/api/v1/repositories/app/tags')).json).toEqual({ repository: 'app', tags: [expect.objectContaining({ tag_name: 'v1' })] });
    expect((await tagRepo('app', 'tmp', commitA)).status).toBe(201);
    expect((await arbor.request('DELETE', '/api/v1/repositories/app/tags/tmp')).status).toBe(204);
    expect((await arbor.request('DELETE', '/api/v1/repositories/app/tags/tmp')).status).toBe(404);
    expect((await arbor.request('GET', '/api/v1/repositories/app/tags/tmp')).status).toBe(404);
  });

  it('answers 404 with the contract\'s body for a missing repository\'s visibility and a tag moved to a missing commit, changing nothing', async () => {
    const missingRepo = await arbor.request('PATCH', '/api/v1/repositories/missing/visibility', { body: { is_public: true } });
    expect(missingRepo).toMatchObject({ status: 404, json: { error: 'repository not found', success: false } });
    // Another org's repository answers exactly like a missing one.
    expect((await createRepo('theirs', { key: other.key })).status).toBe(201);
    const othersRepo = await arbor.request('PATCH', '/api/v1/repositories/theirs/visibility', { body: { is_public: true } });
    expect({ status: othersRepo.status, json: othersRepo.json }).toEqual({ status: 404, json: { error: 'repository not found', success: false } });
    expect((await arbor.request('GET', '/api/v1/repositories/theirs', { key: other.key })).json.is_public).toBe(false);

    expect((await createRepo('patched')).status).toBe(201);
    expect((await tagRepo('patched', 'pinned', commitA)).status).toBe(201);
    const missingCommit = await arbor.request('PATCH', '/api/v1/repositories/patched/tags/pinned', { body: { commit_id: randomUUID(), description: 'moved' } });
    expect({ status: missingCommit.status, json: missingCommit.json }).toEqual({ status: 404, json: { error: 'commit not found', success: false } });
    // Another org's (private) commit is missing to this org too.
    const theirVm = await arbor.bootVm({}, { key: other.key });
    const theirCommit = (await arbor.request('POST', `/api/v1/vm/${theirVm}/commit`, { key: other.key })).json.commit_id;
    const afterTheirs = await arbor.infra.eventStore.headPosition();
    const othersCommit = await arbor.request('PATCH', '/api/v1/repositories/patched/tags/pinned', { body: { commit_id: theirCommit } });
    expect({ status: othersCommit.status, json: othersCommit.json }).toEqual({ status: 404, json: { error: 'commit not found', success: false } });
    // Neither half of a refused change is applied, and nothing is written for it.
    expect((await arbor.request('GET', '/api/v1/repositories/patched/tags/pinned')).json).toMatchObject({ commit_id: commitA, description: null });
    expect(await arbor.infra.eventStore.headPosition()).toBe(afterTheirs);
    expect((await arbor.request('DELETE', `/api/v1/vm/${theirVm}`, { key: other.key })).status).toBe(200);
  });

  it('a commit a tag points at cannot be deleted (409) until the tag moves or goes', async () => {
    const c = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id;
    await tagRepo('app', 'hold', c);
    await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'hold', commit_id: c } });
    expect((await arbor.request('DELETE', `/api/v1/commits/${c}`)).json).toEqual({ error: 'commit is still tagged: repo app:hold, tag hold', success: false });
    await arbor.request('PATCH', '/api/v1/repositories/app/tags/hold', { body: { commit_id: commitA } });
    expect((await arbor.request('DELETE', `/api/v1/commits/${c}`)).json).toEqual({ error: 'commit is still tagged: tag hold', success: false });
    await arbor.request('DELETE', '/api/v1/commit_tags/hold');
    expect((await arbor.request('DELETE', `/api/v1/commits/${c}`)).status).toBe(204);
    expect((await tagRepo('app', 'late', c)).json).toEqual({ error: 'commit not found', success: false });
  });

  it("starts VMs from the org's own repository by `repo:tag`, `org/repo:tag` and by_ref", async () => {
    const fromRef = await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: 'app:v1' } });
    expect(fromRef.status).toBe(201);
    const fromQualified = await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: `${admin}/app:v1` } });
    expect(fromQualified.status).toBe(201);
    const byRef = await arbor.request('POST', '/api/v1/vm/branch/by_ref/app/v1?count=2');
    expect(byRef.status).toBe(201);
    const byQualifiedRef = await arbor.request('POST', `/api/v1/vm/branch/by_ref/${admin}%2Fapp/v1`);
    expect(byQualifiedRef.status).toBe(201);
    for (const id of [...(await vmsFrom(fromRef)), ...(await vmsFrom(fromQualified)), ...(await vmsFrom(byRef)), ...(await vmsFrom(byQualifiedRef))]) {
      expect((await arbor.request('GET', `/api/v1/vm/${id}/metadata`)).json.parent_commit_id).toBe(commitB);
      await arbor.request('DELETE', `/api/v1/vm/${id}`);
    }
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: 'app:nope' } })).json).toEqual({ error: 'tag not found', success: false });
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: 'nope:v1' } })).json).toEqual({ error: 'repository not found', success: false });
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: 'a/b/c:v1' } })).json).toEqual({ error: 'repository not found', success: false });
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: 'no-tag' } })).status).toBe(400);
    const missing = await arbor.request('POST', '/api/v1/vm/branch/by_ref/nope/v1');
    expect({ status: missing.status, body: missing.json }).toEqual({ status: 404, body: { vms: [], error: 'repository not found' } });
  });

  it("another org's private repository is invisible: answered like a missing one everywhere", async () => {
    expect((await arbor.request('GET', '/api/v1/repositories/app', { key: other.key })).json.repo_id).not.toBe((await arbor.request('GET', '/api/v1/repositories/app')).json.repo_id);
    expect((await arbor.request('GET', `/api/v1/public/repositories/${admin}/app`, { key: null })).status).toBe(404);
    expect((await arbor.request('GET', `/api/v1/public/repositories/${admin}/app/tags`, { key: null })).status).toBe(404);
    const restore = await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { ref: `${admin}/app:v1` } });
    expect(restore.json).toEqual({ error: 'repository not found', success: false });
    expect((await arbor.request('POST', `/api/v1/vm/branch/by_ref/${admin}%2Fapp/v1`, { key: other.key })).status).toBe(404);
    expect((await arbor.request('DELETE', '/api/v1/repositories/app/tags/v1', { key: other.key })).status).toBe(404);
  });

  it('a public repository is listed and read without a key, and restorable by any org though its commit is private', async () => {
    expect((await arbor.request('PATCH', '/api/v1/repositories/app/visibility', { body: { is_public: true } })).status).toBe(204);
    const listed = (await arbor.request('GET', '/api/v1/public/repositories', { key: null })).json.repositories;
    expect(listed).toContainEqual({ repo_id: expect.any(String), org_name: admin, name: 'app', full_name: `${admin}/app`, created_at: expect.any(String), description: 'the app' });
    expect((await arbor.request('GET', `/api/v1/public/repositories/${admin}/app`, { key: null })).json.full_name).toBe(`${admin}/app`);
    expect((await arbor.request('GET', `/api/v1/public/repositories/${admin}/app/tags`, { key: null })).json).toEqual({
      repository: 'app',
      tags: expect.arrayContaining([expect.objectContaining({ tag_name: 'v1', reference: 'app:v1' })]),
    });
    expect((await arbor.request('GET', `/api/v1/public/repositories/${admin}/app/tags/v1`, { key: null })).json.commit_id).toBe(commitB);
    expect((await arbor.request('GET', `/api/v1/public/repositories/${admin}/app/tags/nope`, { key: null })).status).toBe(404);
    expect((await arbor.request('GET', `/api/v1/public/repositories/nobody/app`, { key: null })).status).toBe(404);
    // The commit itself stays private: not readable by id, but restorable through the repository.
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { commit_id: commitB } })).status).toBe(404);
    const restored = await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { ref: `${admin}/app:v1` } });
    expect(restored.status).toBe(201);
    const branched = await arbor.request('POST', `/api/v1/vm/branch/by_ref/${admin}%2Fapp/v1`, { key: other.key });
    expect(branched.status).toBe(201);
    for (const id of [restored.json.vm_id, branched.json.vms[0].vm_id]) {
      expect((await arbor.request('GET', `/api/v1/vm/${id}/status`, { key: other.key })).json.state).toBe('running');
      expect((await arbor.request('GET', `/api/v1/vm/${id}`, { key: other.key })).status).not.toBe(500);
      await arbor.request('DELETE', `/api/v1/vm/${id}`, { key: other.key });
    }
    // Private again: the next restore answers 404 at once.
    await arbor.request('PATCH', '/api/v1/repositories/app/visibility', { body: { is_public: false } });
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { ref: `${admin}/app:v1` } })).status).toBe(404);
    expect((await arbor.request('GET', '/api/v1/public/repositories', { key: null })).json.repositories.map((r: { name: string }) => r.name)).not.toContain('app');
  });

  it('deleting a repository deletes its tags, keeps its commits, and leaves VMs made through it running', async () => {
    expect((await createRepo('gone')).status).toBe(201);
    await tagRepo('gone', 'v1', commitA);
    const child = (await arbor.request('POST', '/api/v1/vm/from_commit', { body: { ref: 'gone:v1' } })).json.vm_id;
    expect((await arbor.request('DELETE', '/api/v1/repositories/gone')).status).toBe(204);
    expect((await arbor.request('GET', '/api/v1/repositories/gone/tags')).status).toBe(404);
    expect((await arbor.request('GET', `/api/v1/vm/${child}/status`)).json.state).toBe('running');
    expect((await arbor.request('GET', '/api/v1/commits?limit=100')).json.commits.map((c: { commit_id: string }) => c.commit_id)).toContain(commitA);
    expect((await createRepo('gone')).status).toBe(201);
    expect((await arbor.request('GET', '/api/v1/repositories/gone/tags')).json.tags).toEqual([]);
    await arbor.request('DELETE', `/api/v1/vm/${child}`);
  });

  it('restores racing a visibility change or a deletion: once the change has answered, every restore is refused', async () => {
    expect((await createRepo('racy')).status).toBe(201);
    await tagRepo('racy', 'v1', commitA);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (const change of ['hide', 'delete'] as const) {
      await arbor.request('PATCH', '/api/v1/repositories/racy/visibility', { body: { is_public: true } });
      let changedAt = Infinity;
      // Three clients restoring over and over, until each has had three answers after the change.
      const client = async () => {
        const answers: { sentAt: number; status: number; vm_id?: string }[] = [];
        while (answers.filter((a) => a.sentAt > changedAt).length < 3) {
          const sentAt = Date.now();
          const res = await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { ref: `${admin}/racy:v1` } });
          answers.push({ sentAt, status: res.status, vm_id: res.json?.vm_id });
        }
        return answers;
      };
      const restores = Promise.all([client(), client(), client()]).then((all) => all.flat());
      const changing = sleep(20).then(async () => {
        const res = change === 'hide'
          ? await arbor.request('PATCH', '/api/v1/repositories/racy/visibility', { body: { is_public: false } })
          : await arbor.request('DELETE', '/api/v1/repositories/racy');
        expect(res.status).toBe(204);
        changedAt = Date.now();
      });
      const [results] = await Promise.all([restores, changing]);
      expect(results.every((r) => r.status === 201 || r.status === 404)).toBe(true);
      expect(results.filter((r) => r.sentAt > changedAt).map((r) => r.status)).toEqual(results.filter((r) => r.sentAt > changedAt).map(() => 404));
      expect(results.filter((r) => r.sentAt > changedAt).length).toBe(9);
      for (const { vm_id } of results.filter((r) => r.status === 201)) {
        expect((await arbor.request('GET', `/api/v1/vm/${vm_id}/status`, { key: other.key })).json.state).toBe('running');
        await arbor.request('DELETE', `/api/v1/vm/${vm_id}`, { key: other.key });
      }
    }
  });

  it('the log tells the story: repository and tag events, tied to their requests by correlation ids', async () => {
    const correlation = randomUUID();
    const headers = { 'x-correlation-id': correlation };
    await arbor.request('POST', '/api/v1/repositories', { body: { name: 'told' }, headers });
    await arbor.request('POST', '/api/v1/repositories/told/tags', { body: { tag_name: 'v1', commit_id: commitA }, headers });
    const events = (await arbor.request('GET', '/api/v1/events?limit=1000')).json.events as { type: string; stream_id: string; metadata: { correlation_id: string } }[];
    const caused = events.filter((e) => e.metadata.correlation_id === correlation).map((e) => [e.type, e.stream_id.split('-')[0]]);
    expect(caused).toEqual([['RepositoryCreated', 'repo'], ['CommitTagged', 'commit'], ['RepoTagCreated', 'repo']]);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['RepositoryCreated', 'RepositoryVisibilityChanged', 'RepositoryDeleted', 'RepoTagCreated', 'RepoTagMoved', 'RepoTagDescribed', 'RepoTagDeleted', 'CommitTagged', 'CommitUntagged', 'OrgNameReserved']),
    );
  });
});
