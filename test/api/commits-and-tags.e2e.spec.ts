import { randomUUID } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/** Commits, their parent chain, visibility and tags through HTTP (machines in memory). */
describe('commits and commit tags (HTTP)', () => {
  let arbor: TestArbor;
  let other: { key: string; org_id: string };
  let vmId: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
    vmId = await arbor.bootVm({ fs_size_mib: 2048 });
  });
  afterAll(() => arbor.destroy());

  const commit = async (vm: string, body?: unknown, query = '') => {
    const res = await arbor.request('POST', `/api/v1/vm/${vm}/commit${query}`, { body });
    expect(res.status).toBe(201);
    return res.json.commit_id as string;
  };

  it('commits with no body, {} or a client-chosen id, name and description', async () => {
    const a = await commit(vmId);
    const b = await commit(vmId, {});
    const chosen = randomUUID();
    expect(await commit(vmId, { commit_id: chosen, name: 'golden', description: 'the one' })).toBe(chosen);
    expect(new Set([a, b, chosen]).size).toBe(3);
    const list = (await arbor.request('GET', '/api/v1/commits')).json;
    const golden = list.commits.find((c: { commit_id: string }) => c.commit_id === chosen);
    expect(golden).toEqual({
      commit_id: chosen,
      owner_id: arbor.adminKey.slice(0, 36),
      name: 'golden',
      created_at: expect.any(String),
      is_public: false,
      description: 'the one',
      parent_vm_id: vmId,
      grandparent_commit_id: null,
      includes_memory: false,
    });
    const again = await arbor.request('POST', `/api/v1/vm/${vmId}/commit`, { body: { commit_id: chosen } });
    expect(again.status).toBe(409);
  });

  it('keep_paused leaves the source paused; otherwise it keeps running', async () => {
    await commit(vmId, undefined, '?keep_paused=true');
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('paused');
    await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Running' } });
    await commit(vmId);
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('running');
  });

  it('pages commits with limit/offset as query parameters, newest first', async () => {
    const all = (await arbor.request('GET', '/api/v1/commits?limit=100')).json;
    expect(all.total).toBeGreaterThanOrEqual(4);
    const page = (await arbor.request('GET', '/api/v1/commits?limit=2&offset=1')).json;
    expect(page).toMatchObject({ limit: 2, offset: 1, total: all.total });
    expect(page.commits.map((c: { commit_id: string }) => c.commit_id)).toEqual(all.commits.slice(1, 3).map((c: { commit_id: string }) => c.commit_id));
    expect((await arbor.request('GET', '/api/v1/commits?limit=1000')).json.limit).toBe(100);
    // A query string that does not deserialize is a 400, as axum answers (a body of the wrong shape is a 422).
    const bad = await arbor.request('GET', '/api/v1/commits?limit=abc');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^Failed to deserialize query string: limit/);
    expect((await arbor.request('GET', '/api/v1/commits?offset=-1')).status).toBe(400);
  });

  it('walks the parent chain from a commit back to its root in one call', async () => {
    const root = await commit(vmId);
    const child = (await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id: root } })).json.vm_id;
    const middle = await commit(child);
    const grandchild = (await arbor.request('POST', `/api/v1/vm/branch/by_commit/${middle}`)).json.vms[0].vm_id;
    const leaf = await commit(grandchild);
    const chain = (await arbor.request('GET', `/api/v1/vm/commits/${leaf}/parents`)).json;
    expect(chain.map((c: { id: string }) => c.id)).toEqual([leaf, middle, root]);
    expect(chain[0]).toMatchObject({ id: leaf, parent_vm_id: grandchild, grandparent_commit_id: middle });
    const metadata = (await arbor.request('GET', `/api/v1/vm/${grandchild}/metadata`)).json;
    expect(metadata).toMatchObject({ parent_commit_id: middle, grandparent_vm_id: child });
  });

  it('public commits are readable and restorable by every org; private ones only by their own', async () => {
    const id = await commit(vmId, { name: 'shared' });
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { commit_id: id } })).status).toBe(404);
    expect((await arbor.request('GET', `/api/v1/vm/commits/${id}/parents`, { key: other.key })).status).toBe(404);
    expect((await arbor.request('GET', '/api/v1/commits/public')).json.commits.map((c: { commit_id: string }) => c.commit_id)).not.toContain(id);

    const patched = await arbor.request('PATCH', `/api/v1/commits/${id}`, { body: { is_public: true, name: '  ', description: 'now public' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ commit_id: id, is_public: true, name: 'shared', description: 'now public' });

    expect((await arbor.request('GET', '/api/v1/commits/public', { key: other.key })).json.commits.map((c: { commit_id: string }) => c.commit_id)).toContain(id);
    const restored = await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { commit_id: id } });
    expect(restored.status).toBe(201);
    // ...but only the owner may change or delete it.
    expect((await arbor.request('PATCH', `/api/v1/commits/${id}`, { key: other.key, body: { is_public: false } })).status).toBe(404);
    expect((await arbor.request('DELETE', `/api/v1/commits/${id}`, { key: other.key })).status).toBe(404);
    await arbor.request('DELETE', `/api/v1/vm/${restored.json.vm_id}`, { key: other.key });
  });

  it('refuses to delete a commit while VMs use it (409), then deletes it (204)', async () => {
    const id = await commit(vmId);
    const child = (await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id: id } })).json.vm_id;
    const refused = await arbor.request('DELETE', `/api/v1/commits/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe('commit still has 1 active VM(s)');
    await arbor.request('DELETE', `/api/v1/vm/${child}`);
    const deleted = await arbor.request('DELETE', `/api/v1/commits/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await arbor.request('GET', '/api/v1/commits?limit=100')).json.commits.map((c: { commit_id: string }) => c.commit_id)).not.toContain(id);
    expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id: id } })).status).toBe(404);
  });

  describe('tags', () => {
    let first: string;
    let second: string;
    beforeAll(async () => {
      first = await commit(vmId);
      second = await commit(vmId);
    });

    it('creates (201), gets, lists, and refuses a duplicate name (409)', async () => {
      const created = await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'stable', commit_id: first, description: 'ok' } });
      expect(created.status).toBe(201);
      expect(created.json).toEqual({ tag_id: expect.any(String), tag_name: 'stable', commit_id: first });
      const tag = (await arbor.request('GET', '/api/v1/commit_tags/stable')).json;
      expect(tag).toEqual({ tag_id: created.json.tag_id, tag_name: 'stable', commit_id: first, description: 'ok', created_at: expect.any(String), updated_at: tag.created_at });
      expect((await arbor.request('GET', '/api/v1/commit_tags')).json.tags.map((t: { tag_name: string }) => t.tag_name)).toContain('stable');
      const before = await arbor.infra.eventStore.headPosition();
      const duplicate = await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'stable', commit_id: second } });
      expect(duplicate.json).toEqual({ error: "tag 'stable' already exists", success: false });
      expect(duplicate.status).toBe(409);
      // Refused before the commit is held: no hold taken and let go in the log.
      expect(await arbor.infra.eventStore.headPosition()).toBe(before);
    });

    it('concurrent creates of one name: exactly one wins', async () => {
      const results = await Promise.all([first, second, first].map((commit_id) => arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'race', commit_id } })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    });

    it('moves (204, bumps updated_at), keeps/clears/sets the description tri-state', async () => {
      const before = (await arbor.request('GET', '/api/v1/commit_tags/stable')).json;
      const moved = await arbor.request('PATCH', '/api/v1/commit_tags/stable', { body: { commit_id: second } });
      expect(moved.status).toBe(204);
      const after = (await arbor.request('GET', '/api/v1/commit_tags/stable')).json;
      expect(after).toMatchObject({ commit_id: second, description: 'ok' });
      expect(after.updated_at > before.updated_at).toBe(true);
      await arbor.request('PATCH', '/api/v1/commit_tags/stable', { body: { description: null } });
      expect((await arbor.request('GET', '/api/v1/commit_tags/stable')).json.description).toBeNull();
      await arbor.request('PATCH', '/api/v1/commit_tags/stable', { body: { description: 'back' } });
      expect((await arbor.request('GET', '/api/v1/commit_tags/stable')).json.description).toBe('back');
    });

    it('branches and restores by tag; tags are org-scoped', async () => {
      const branched = await arbor.request('POST', '/api/v1/vm/branch/by_tag/stable?count=2');
      expect(branched.status).toBe(201);
      expect(branched.json.vms).toHaveLength(2);
      expect((await arbor.request('GET', `/api/v1/vm/${branched.json.vms[0].vm_id}/metadata`)).json.parent_commit_id).toBe(second);
      expect((await arbor.request('POST', '/api/v1/vm/from_commit', { body: { tag_name: 'stable' } })).status).toBe(201);
      expect((await arbor.request('GET', '/api/v1/commit_tags/stable', { key: other.key })).status).toBe(404);
      expect((await arbor.request('POST', '/api/v1/vm/from_commit', { key: other.key, body: { tag_name: 'stable' } })).status).toBe(404);
    });

    it('validates names and commits; deletes (204); the name can be reused', async () => {
      // The naming rule is the domain's: 400 saying the rule, checked before the commit is looked up.
      const rule = { error: 'tag_name may hold only letters, digits, ".", "_" and "-" (1-64 characters)', success: false };
      for (const tag_name of ['bad name!', '', 'x'.repeat(65), 'a/b']) {
        const res = await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name, commit_id: first } });
        expect({ tag_name, status: res.status, body: res.json }).toEqual({ tag_name, status: 400, body: rule });
      }
      expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'bad name!', commit_id: randomUUID() } })).status).toBe(400);
      expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'a'.repeat(64), commit_id: first } })).status).toBe(201);
      // Shape errors stay 422: a missing name, or one that is not a string.
      expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { commit_id: first } })).status).toBe(422);
      expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 7, commit_id: first } })).status).toBe(422);
      expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'x', commit_id: randomUUID() } })).json).toEqual({ error: 'commit not found', success: false });
      expect((await arbor.request('PATCH', '/api/v1/commit_tags/stable', { body: { commit_id: randomUUID() } })).status).toBe(404);
      expect((await arbor.request('DELETE', '/api/v1/commit_tags/stable')).status).toBe(204);
      expect((await arbor.request('GET', '/api/v1/commit_tags/stable')).status).toBe(404);
      expect((await arbor.request('DELETE', '/api/v1/commit_tags/stable')).status).toBe(404);
      expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'stable', commit_id: first } })).status).toBe(201);
    });
  });
});
