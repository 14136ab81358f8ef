import { randomUUID } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForMember, issueKeyForNewOrg, type IssuedTestKey } from '../support/issue-key';
import { pollUntil } from '../support/poll-until';
import { tarOf } from '../support/tar-archives';

/**
 * The role rule (libs/domain/src/org/org-roles.ts) on every write operation that changes or
 * deletes something, over HTTP: in one org an owner, an admin and a member; in another org an
 * outsider. For each operation: what the owner made, the member may not touch (403, nothing
 * appended); what the member made, the member and the admin may; another org's answers exactly
 * like a missing one (404, nothing appended). In-memory hypervisor: the rule is the api's.
 */
type Call = { method: string; path: string; body?: unknown };
/** Makes the resource as `key`, answering the call that changes it (given the id of a resource that does not exist, answers that call instead). */
type Operation = { name: string; make: (key: string) => Promise<(missing?: boolean) => Call>; ok: number; walled?: number };

describe('the role rule on every write operation (HTTP)', () => {
  let arbor: TestArbor;
  let owner: IssuedTestKey;
  let admin: IssuedTestKey;
  let member: IssuedTestKey;
  let outsider: IssuedTestKey;

  beforeAll(async () => {
    // Every operation makes its own VMs: far more than an org's default quota allows.
    const roomy = { ARBOR_QUOTA_VMS: '1000', ARBOR_QUOTA_VCPUS: '10000', ARBOR_QUOTA_MEMORY_MIB: '100000000', ARBOR_QUOTA_DISK_MIB: '100000000', ARBOR_QUOTA_COMMIT_MIB: '100000000' };
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env: roomy });
    owner = await issueKeyForNewOrg(arbor.infra.eventStore);
    admin = await issueKeyForMember(arbor.infra.eventStore, owner.org_id, 'admin');
    member = await issueKeyForMember(arbor.infra.eventStore, owner.org_id, 'member');
    outsider = await issueKeyForNewOrg(arbor.infra.eventStore);
  }, 120_000);
  afterAll(() => arbor?.destroy());

  async function send(key: string, method: string, path: string, body?: unknown) {
    const answer = await arbor.request(method, path, { key, body });
    if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    return answer.json;
  }
  const vmOf = (key: string) => arbor.bootVm({}, { key });
  const commitOf = async (key: string) => (await send(key, 'POST', `/api/v1/vm/${await vmOf(key)}/commit`)).commit_id as string;
  const tagOf = async (key: string) => {
    const tag_name = `tag-${randomUUID().slice(0, 8)}`;
    await send(key, 'POST', '/api/v1/commit_tags', { tag_name, commit_id: await commitOf(key) });
    return tag_name;
  };
  const repoOf = async (key: string) => {
    const name = `repo-${randomUUID().slice(0, 8)}`;
    await send(key, 'POST', '/api/v1/repositories', { name });
    return name;
  };

  /** A built image of `key`'s (a tiny uploaded root filesystem). */
  const imageOf = async (key: string) => {
    const form = new FormData();
    form.append('file', new Blob([await tarOf([{ name: 'etc/hostname', content: 'img\n' }])]), 'root.tar');
    const image_name = `img-${randomUUID().slice(0, 8)}`;
    const response = await fetch(`${arbor.url}/api/v1/images/upload?image_name=${image_name}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    if (response.status !== 201) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
    const { job_id } = (await response.json()) as { job_id: string };
    await pollUntil(async () => (await send(key, 'GET', `/api/v1/images/${image_name}/status`)).status === 'completed', { timeoutMs: 30_000 });
    return job_id;
  };
  const onImage = (call: (image: string) => Call, ok: number): Omit<Operation, 'name'> => ({
    make: async (key) => {
      const image = await imageOf(key);
      return (missing) => call(missing ? randomUUID() : image);
    },
    ok,
  });
  const onVm = (call: (vm: string) => Call, ok: number): Omit<Operation, 'name'> => ({
    make: async (key) => {
      const vm = await vmOf(key);
      return (missing) => call(missing ? randomUUID() : vm);
    },
    ok,
  });
  const onCommit = (call: (commit: string) => Call, ok: number): Omit<Operation, 'name'> => ({
    make: async (key) => {
      const commit = await commitOf(key);
      return (missing) => call(missing ? randomUUID() : commit);
    },
    ok,
  });
  const onTag = (call: (tag: string) => Call, ok: number): Omit<Operation, 'name'> => ({
    make: async (key) => {
      const tag = await tagOf(key);
      return (missing) => call(missing ? `none-${randomUUID().slice(0, 8)}` : tag);
    },
    ok,
  });
  const onRepo = (call: (repo: string) => Call, ok: number): Omit<Operation, 'name'> => ({
    make: async (key) => {
      const repo = await repoOf(key);
      return (missing) => call(missing ? `none-${randomUUID().slice(0, 8)}` : repo);
    },
    ok,
  });
  /** A repository tag made by `key` in a repository the owner made (any member may tag in the org's repositories). */
  const onRepoTag = (call: (repo: string, tag: string) => Call, ok: number): Omit<Operation, 'name'> => ({
    make: async (key) => {
      const repo = await repoOf(owner.key);
      const tag = `v-${randomUUID().slice(0, 8)}`;
      await send(key, 'POST', `/api/v1/repositories/${repo}/tags`, { tag_name: tag, commit_id: await commitOf(key) });
      return (missing) => call(repo, missing ? `none-${randomUUID().slice(0, 8)}` : tag);
    },
    ok,
  });

  const operations: Operation[] = [
    { name: 'PATCH /vm/{id}/state', ...onVm((vm) => ({ method: 'PATCH', path: `/api/v1/vm/${vm}/state`, body: { state: 'Paused' } }), 200) },
    { name: 'POST /vm/{id}/commit', ...onVm((vm) => ({ method: 'POST', path: `/api/v1/vm/${vm}/commit` }), 201) },
    { name: 'PATCH /vm/{id}/disk', ...onVm((vm) => ({ method: 'PATCH', path: `/api/v1/vm/${vm}/disk`, body: { fs_size_mib: 8192 } }), 200) },
    { name: 'PATCH /vm/{id}/label', ...onVm((vm) => ({ method: 'PATCH', path: `/api/v1/vm/${vm}/label`, body: { labels: { team: 'a' } } }), 200) },
    // The contract answers a VM another org has, or nobody, 403 on deletion.
    { name: 'DELETE /vm/{id}', ...onVm((vm) => ({ method: 'DELETE', path: `/api/v1/vm/${vm}` }), 200), walled: 403 },
    { name: 'POST /vm/{id}/exec', ...onVm((vm) => ({ method: 'POST', path: `/api/v1/vm/${vm}/exec`, body: { command: ['true'] } }), 200) },
    { name: 'POST /vm/{id}/exec/stream', ...onVm((vm) => ({ method: 'POST', path: `/api/v1/vm/${vm}/exec/stream`, body: { command: ['true'] } }), 200) },
    { name: 'PUT /vm/{id}/files', ...onVm((vm) => ({ method: 'PUT', path: `/api/v1/vm/${vm}/files`, body: { path: '/tmp/x', content_b64: 'aGk=' } }), 200) },
    { name: 'GET /vm/{id}/ssh_key (the power to change it)', ...onVm((vm) => ({ method: 'GET', path: `/api/v1/vm/${vm}/ssh_key` }), 200) },
    { name: 'POST /vm/branch/by_vm/{id}', ...onVm((vm) => ({ method: 'POST', path: `/api/v1/vm/branch/by_vm/${vm}` }), 201) },
    { name: 'POST /vm/{id}/branch (a VM)', ...onVm((vm) => ({ method: 'POST', path: `/api/v1/vm/${vm}/branch` }), 201) },
    { name: 'PATCH /commits/{id}', ...onCommit((commit) => ({ method: 'PATCH', path: `/api/v1/commits/${commit}`, body: { is_public: true } }), 200) },
    { name: 'DELETE /commits/{id}', ...onCommit((commit) => ({ method: 'DELETE', path: `/api/v1/commits/${commit}` }), 204) },
    { name: 'PATCH /commit_tags/{name}', ...onTag((tag) => ({ method: 'PATCH', path: `/api/v1/commit_tags/${tag}`, body: { description: 'moved' } }), 204) },
    { name: 'DELETE /commit_tags/{name}', ...onTag((tag) => ({ method: 'DELETE', path: `/api/v1/commit_tags/${tag}` }), 204) },
    { name: 'PATCH /repositories/{name}/visibility', ...onRepo((repo) => ({ method: 'PATCH', path: `/api/v1/repositories/${repo}/visibility`, body: { is_public: true } }), 204) },
    { name: 'DELETE /repositories/{name}', ...onRepo((repo) => ({ method: 'DELETE', path: `/api/v1/repositories/${repo}` }), 204) },
    { name: 'PATCH /repositories/{name}/tags/{tag}', ...onRepoTag((repo, tag) => ({ method: 'PATCH', path: `/api/v1/repositories/${repo}/tags/${tag}`, body: { description: 'moved' } }), 204) },
    { name: 'DELETE /repositories/{name}/tags/{tag}', ...onRepoTag((repo, tag) => ({ method: 'DELETE', path: `/api/v1/repositories/${repo}/tags/${tag}` }), 204) },
    {
      // A domain routes to the org's VM: any member adds one; who added it (or an admin) removes it.
      name: 'DELETE /domains/{id}',
      make: async (key) => {
        const { domain_id } = await send(key, 'POST', '/api/v1/domains', { vm_id: await vmOf(owner.key), domain: `d-${randomUUID().slice(0, 8)}.example.com` });
        return (missing) => ({ method: 'DELETE', path: `/api/v1/domains/${missing ? randomUUID() : domain_id}` });
      },
      ok: 200,
    },
    { name: 'DELETE /images/images/{id}', ...onImage((image) => ({ method: 'DELETE', path: `/api/v1/images/images/${image}` }), 200) },
    { name: 'PATCH /arbor/v1/images/{id}', ...onImage((image) => ({ method: 'PATCH', path: `/arbor/v1/images/${image}`, body: { is_public: false } }), 200) },
    {
      name: 'DELETE /arbor/v1/webhooks/{id}',
      make: async (key) => {
        const { webhook_id } = await send(key, 'POST', '/arbor/v1/webhooks', { url: 'https://example.com/hook' });
        return (missing) => ({ method: 'DELETE', path: `/arbor/v1/webhooks/${missing ? randomUUID() : webhook_id}` });
      },
      ok: 204,
    },
    {
      name: 'DELETE /arbor/v1/keys/{id}',
      make: async (key) => {
        const { api_key_id: key_id } = await send(key, 'POST', '/arbor/v1/keys', { label: 'a spare key' });
        return (missing) => ({ method: 'DELETE', path: `/arbor/v1/keys/${missing ? randomUUID() : key_id}` });
      },
      ok: 204,
    },
  ];

  const answer = async (key: string, { method, path, body }: Call) => {
    const res = await arbor.request(method, path, { key, body });
    return { status: res.status, body: res.json };
  };
  /** The call's answer, and that the refused call appended nothing (other work of earlier calls may still be appending). */
  async function refused(key: string, request: Call) {
    const before = await arbor.infra.eventStore.headPosition();
    const result = await answer(key, request);
    const appended = await arbor.infra.eventStore.readAll({ after_position: before });
    expect(appended.filter((event) => event.metadata.actor_key_id === key.slice(0, 36)).map((event) => event.type)).toEqual([]);
    return result;
  }

  it.each(operations.map((operation) => [operation.name, operation] as const))('%s', async (_, operation) => {
    // What the owner made: the member is refused, and another org sees nothing there.
    const ownersThing = await operation.make(owner.key);
    const forbidden = await refused(member.key, ownersThing());
    expect(forbidden).toEqual({ status: 403, body: { success: false, error: expect.stringMatching(/^Forbidden: this .+ belongs to another member of the org/) } });
    const walled = await refused(outsider.key, ownersThing());
    expect(walled.status).toBe(operation.walled ?? 404);
    expect(await refused(outsider.key, ownersThing(true))).toEqual(walled);

    // What the member made: theirs to change; an admin's too.
    expect((await answer(member.key, (await operation.make(member.key))())).status).toBe(operation.ok);
    expect((await answer(admin.key, (await operation.make(member.key))())).status).toBe(operation.ok);
  });

  it('an owner changes what an admin made; an admin, what an owner made', async () => {
    const adminsVm = await vmOf(admin.key);
    expect((await answer(owner.key, { method: 'PATCH', path: `/api/v1/vm/${adminsVm}/label`, body: { labels: { by: 'owner' } } })).status).toBe(200);
    const ownersVm = await vmOf(owner.key);
    expect((await answer(admin.key, { method: 'DELETE', path: `/api/v1/vm/${ownersVm}` })).status).toBe(200);
  });

  it("a member creates (VMs, commits of their VMs, tags, repositories, webhooks, keys) and reads the whole org's", async () => {
    const ownersVm = await vmOf(owner.key);
    const ownersCommit = await commitOf(owner.key);
    expect((await answer(member.key, { method: 'GET', path: `/api/v1/vm/${ownersVm}/metadata` })).status).toBe(200);
    // Branching from a commit the org may read makes VMs of the member's own.
    const branched = await answer(member.key, { method: 'POST', path: `/api/v1/vm/branch/by_commit/${ownersCommit}` });
    expect(branched.status).toBe(201);
    const [{ vm_id }] = branched.body.vms;
    expect((await answer(member.key, { method: 'DELETE', path: `/api/v1/vm/${vm_id}` })).status).toBe(200);
    expect((await answer(member.key, { method: 'POST', path: '/api/v1/commit_tags', body: { tag_name: `m-${randomUUID().slice(0, 8)}`, commit_id: ownersCommit } })).status).toBe(201);
  });

  it('members: only owners and admins invite; only an owner makes an owner; anyone may leave; an org keeps an owner', async () => {
    const invite = (key: string, role: string) => answer(key, { method: 'POST', path: '/arbor/v1/org/members', body: { email: `new-${randomUUID().slice(0, 8)}@example.test`, role } });
    expect(await invite(member.key, 'member')).toEqual({ status: 403, body: { success: false, error: 'Forbidden: only owners and admins manage the members of an org' } });
    expect(await invite(admin.key, 'owner')).toEqual({ status: 403, body: { success: false, error: 'Forbidden: only an owner makes, unmakes or removes an owner' } });
    const invited = await invite(admin.key, 'member');
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ role: 'member' });

    const promote = await answer(admin.key, { method: 'PATCH', path: `/arbor/v1/org/members/${owner.user_id}`, body: { role: 'member' } });
    expect(promote.status).toBe(403);
    const lastOwner = await answer(owner.key, { method: 'DELETE', path: `/arbor/v1/org/members/${owner.user_id}` });
    expect(lastOwner.status).toBe(409);

    // A member who leaves: their key acts for nobody at once.
    const leaver = await issueKeyForMember(arbor.infra.eventStore, owner.org_id, 'member');
    expect((await answer(leaver.key, { method: 'POST', path: '/api/v1/keys/validate' })).status).toBe(200);
    expect((await answer(leaver.key, { method: 'DELETE', path: `/arbor/v1/org/members/${leaver.user_id}` })).status).toBe(204);
    expect((await answer(leaver.key, { method: 'POST', path: '/api/v1/keys/validate' })).status).toBe(401);
  });
});
