import { randomUUID } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

type Answer = { status: number; body: unknown };

/**
 * Client-chosen commit ids are scoped by org (issue 13): the same id chosen by two orgs makes two
 * commits, each its own org's everywhere — reads, changes, deletion, restores, branches, commit
 * and repository tags — and another org's chosen id answers exactly like an id nobody has. A
 * public commit, or a public repository's tag, reaches other orgs by the commit's id in the log.
 * Real stores, in-memory driver (what is decided here is the api's and the log's).
 */
describe('client-chosen commit ids are the org’s (HTTP)', () => {
  let arbor: TestArbor;
  let orgs: { a: Org; b: Org; c: Org };
  const chosen = randomUUID();

  interface Org {
    key: string;
    name: string;
    vm: string;
  }

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    const org = async (): Promise<Org> => {
      const { key, org_name } = await issueKeyForNewOrg(arbor.infra.eventStore);
      return { key, name: org_name, vm: await arbor.bootVm({}, { key }) };
    };
    orgs = { a: await org(), b: await org(), c: await org() };
  });
  afterAll(() => arbor?.destroy());

  const call = async (org: Org, method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await arbor.request(method, `/api/v1${path}`, { key: org.key, body });
    return { status: res.status, body: res.json ?? null };
  };
  const ok = async (org: Org, method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await call(org, method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const commitOf = async (org: Org, id: string) => ((await ok(org, 'GET', `/vm/commits/${id}/parents`)) as any[])[0];
  const logIdOf = async (name: string) => {
    const created = (await arbor.infra.eventStore.readAll({ max_count: 100_000 })).filter((e) => e.type === 'CommitCreated' && (e.data as any).name === name);
    expect(created).toHaveLength(1);
    return (created[0].data as { commit_id: string }).commit_id;
  };

  it('the same id chosen by two orgs makes two commits, each seen and used by its own org under that id', async () => {
    const { a, b } = orgs;
    expect(await call(a, 'POST', `/vm/${a.vm}/commit`, { commit_id: chosen, name: 'a-commit' })).toEqual({ status: 201, body: { commit_id: chosen } });
    expect(await call(b, 'POST', `/vm/${b.vm}/commit`, { commit_id: chosen.toUpperCase(), name: 'b-commit' })).toEqual({ status: 201, body: { commit_id: chosen } });
    // Two commits in the log, neither of them under the chosen id itself.
    const [inLogA, inLogB] = [await logIdOf('a-commit'), await logIdOf('b-commit')];
    expect(new Set([inLogA, inLogB, chosen]).size).toBe(3);

    for (const [org, name] of [
      [a, 'a-commit'],
      [b, 'b-commit'],
    ] as const) {
      expect(await commitOf(org, chosen)).toMatchObject({ id: chosen, name, parent_vm_id: org.vm });
      expect((await ok(org, 'GET', '/commits')).commits).toEqual([expect.objectContaining({ commit_id: chosen, name })]);
      // Changed by its own org only.
      expect(await ok(org, 'PATCH', `/commits/${chosen}`, { is_public: false, description: `${name} described` })).toMatchObject({ commit_id: chosen, description: `${name} described` });
      // Restored, branched, tagged: always the org's own.
      const { vm_id } = await ok(org, 'POST', '/vm/from_commit', { commit_id: chosen });
      expect(await ok(org, 'GET', `/vm/${vm_id}/metadata`)).toMatchObject({ parent_commit_id: chosen });
      const { vms } = await ok(org, 'POST', `/vm/branch/by_commit/${chosen}`);
      expect(await ok(org, 'GET', `/vm/${vms[0].vm_id}/metadata`)).toMatchObject({ parent_commit_id: chosen });
      const { vms: polymorphic } = await ok(org, 'POST', `/vm/${chosen}/branch`);
      expect(await ok(org, 'GET', `/vm/${polymorphic[0].vm_id}/metadata`)).toMatchObject({ parent_commit_id: chosen });
      // A commit of a VM started from it names it as its parent.
      const { commit_id: child } = await ok(org, 'POST', `/vm/${vm_id}/commit`);
      expect((await ok(org, 'GET', `/vm/commits/${child}/parents`)).map((c: any) => c.id)).toEqual([child, chosen]);
      expect(await ok(org, 'POST', '/commit_tags', { tag_name: 'scoped', commit_id: chosen })).toMatchObject({ commit_id: chosen });
      expect(await ok(org, 'GET', '/commit_tags/scoped')).toMatchObject({ commit_id: chosen });
      expect((await ok(org, 'GET', '/commit_tags')).tags).toEqual([expect.objectContaining({ tag_name: 'scoped', commit_id: chosen })]);
      await ok(org, 'POST', '/repositories', { name: 'scoped-repo' });
      expect(await ok(org, 'POST', '/repositories/scoped-repo/tags', { tag_name: 'v1', commit_id: chosen })).toMatchObject({ commit_id: chosen });
      expect(await ok(org, 'GET', '/repositories/scoped-repo/tags/v1')).toMatchObject({ commit_id: chosen });
      expect((await ok(org, 'GET', '/repositories/scoped-repo/tags')).tags).toEqual([expect.objectContaining({ commit_id: chosen })]);
      for (const vm of [vm_id, vms[0].vm_id, polymorphic[0].vm_id]) await ok(org, 'DELETE', `/vm/${vm}`);
      await ok(org, 'DELETE', `/commits/${child}`);
    }
    expect((await commitOf(a, chosen)).description).toBe('a-commit described');
    expect((await commitOf(b, chosen)).description).toBe('b-commit described');
  });

  it("answers another org's chosen id exactly like an id nobody has, everywhere, appending nothing", async () => {
    const { a, c } = orgs;
    await ok(c, 'POST', '/repositories', { name: 'outsider-repo' });
    const calls: [string, (id: string) => [string, string, unknown?]][] = [
      ['GET parents', (id) => ['GET', `/vm/commits/${id}/parents`]],
      ['PATCH commit', (id) => ['PATCH', `/commits/${id}`, { is_public: true }]],
      ['DELETE commit', (id) => ['DELETE', `/commits/${id}`]],
      ['from_commit', (id) => ['POST', '/vm/from_commit', { commit_id: id }]],
      ['branch by_commit', (id) => ['POST', `/vm/branch/by_commit/${id}`]],
      ['polymorphic branch', (id) => ['POST', `/vm/${id}/branch`]],
      ['create commit tag', (id) => ['POST', '/commit_tags', { tag_name: 'theirs', commit_id: id }]],
      ['create repository tag', (id) => ['POST', '/repositories/outsider-repo/tags', { tag_name: 'theirs', commit_id: id }]],
    ];
    for (const [what, request] of calls) {
      const before = await arbor.infra.eventStore.headPosition();
      const foreign = await call(c, ...request(chosen));
      const missing = await call(c, ...request(randomUUID()));
      expect({ what, ...foreign }).toEqual({ what, ...missing });
      expect({ what, status: foreign.status }).toEqual({ what, status: 404 });
      expect(await arbor.infra.eventStore.headPosition()).toBe(before);
    }
    // A's commit is untouched.
    expect(await commitOf(a, chosen)).toMatchObject({ is_public: false });
  });

  it('refuses an id the org already names a commit by, and only that', async () => {
    const { a, c } = orgs;
    const taken = { status: 409, body: { error: `commit ${chosen} already exists`, success: false } };
    expect(await call(a, 'POST', `/vm/${a.vm}/commit`, { commit_id: chosen })).toEqual(taken);
    // Its own generated id is taken too; another org's (private) generated id is as free as any.
    const { commit_id: generated } = await ok(a, 'POST', `/vm/${a.vm}/commit`);
    expect(await call(a, 'POST', `/vm/${a.vm}/commit`, { commit_id: generated })).toEqual({ status: 409, body: { error: `commit ${generated} already exists`, success: false } });
    expect(await call(c, 'POST', `/vm/${c.vm}/commit`, { commit_id: generated })).toEqual({ status: 201, body: { commit_id: generated } });
    expect(await commitOf(c, generated)).toMatchObject({ parent_vm_id: c.vm });
    expect(await commitOf(a, generated)).toMatchObject({ parent_vm_id: a.vm });
  });

  it('a public commit and a public repository reach other orgs by the id in the log', async () => {
    const { a, b, c } = orgs;
    const inLog = await logIdOf('a-commit');
    // A public repository of A with a tag on its chosen-id commit (the commit itself private).
    await ok(a, 'PATCH', '/repositories/scoped-repo/visibility', { is_public: true });
    const publicTag = await ok(c, 'GET', `/public/repositories/${a.name}/scoped-repo/tags/v1`);
    expect(publicTag).toMatchObject({ commit_id: inLog });
    const { vm_id: restored } = await ok(c, 'POST', '/vm/from_commit', { ref: `${a.name}/scoped-repo:v1` });
    expect(await ok(c, 'GET', `/vm/${restored}/metadata`)).toMatchObject({ parent_commit_id: inLog });
    await ok(c, 'DELETE', `/vm/${restored}`);
    const fork = await ok(c, 'POST', '/repositories/fork', { source_org: a.name, source_repo: 'scoped-repo', source_tag: 'v1', repo_name: 'forked' });
    expect(await ok(c, 'GET', `/vm/${fork.vm_id}/metadata`)).toMatchObject({ parent_commit_id: inLog });
    expect(await commitOf(c, fork.commit_id)).toMatchObject({ id: fork.commit_id, grandparent_commit_id: inLog });
    await ok(c, 'DELETE', `/vm/${fork.vm_id}`);

    // Made public, the commit is listed (and restorable) by its id in the log; A still sees its own name.
    await ok(a, 'PATCH', `/commits/${chosen}`, { is_public: true });
    const listed = (await ok(c, 'GET', '/commits/public')).commits as { commit_id: string; name: string }[];
    expect(listed.filter((commit) => commit.name === 'a-commit').map((commit) => commit.commit_id)).toEqual([inLog]);
    expect(listed.map((commit) => commit.commit_id)).not.toContain(chosen);
    expect(await commitOf(c, inLog)).toMatchObject({ id: inLog, name: 'a-commit' });
    expect(await commitOf(a, chosen)).toMatchObject({ id: chosen, is_public: true });
    const { vm_id: fromPublic } = await ok(c, 'POST', '/vm/from_commit', { commit_id: inLog });
    await ok(c, 'DELETE', `/vm/${fromPublic}`);
    // B's chosen id still names B's own commit, not A's public one.
    expect(await commitOf(b, chosen)).toMatchObject({ name: 'b-commit', is_public: false });
    // A public commit's id is one every org already names it by: choosing it is refused.
    expect(await call(b, 'POST', `/vm/${b.vm}/commit`, { commit_id: inLog })).toEqual({ status: 409, body: { error: `commit ${inLog} already exists`, success: false } });
  });

  it('deleting one org’s commit leaves the other’s', async () => {
    const { a, b } = orgs;
    await ok(a, 'DELETE', '/repositories/scoped-repo/tags/v1');
    await ok(a, 'DELETE', '/commit_tags/scoped');
    expect(await call(a, 'DELETE', `/commits/${chosen}`)).toEqual({ status: 204, body: null });
    expect((await call(a, 'GET', `/vm/commits/${chosen}/parents`)).status).toBe(404);
    expect(await commitOf(b, chosen)).toMatchObject({ name: 'b-commit' });
    const { vm_id } = await ok(b, 'POST', '/vm/from_commit', { commit_id: chosen });
    await ok(b, 'DELETE', `/vm/${vm_id}`);
  });
});
