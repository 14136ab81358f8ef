import { COMMIT_ANCESTORS_COLLECTION, COMMIT_NAMES_COLLECTION, COMMITS_COLLECTION } from '@arbor/read-models';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/**
 * GET /vm/commits/{id}/parents: the commit, then its ancestors nearest first, read with a few
 * queries however deep; the chain shows only what the org may read, and ends before the first ancestor it
 * may not (another org's private commit, or a deleted one). Sandbox driver.
 */
describe('GET /vm/commits/{id}/parents (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let other: { key: string };

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const newRoot = () => arbor.bootVm();
  const commitOf = async (vm: string, key?: string) => {
    const res = await arbor.request('POST', `/api/v1/vm/${vm}/commit`, { key });
    expect(res.status).toBe(201);
    return res.json.commit_id as string;
  };
  const fromCommit = async (commit_id: string, key?: string) => {
    const res = await arbor.request('POST', '/api/v1/vm/from_commit', { key, body: { commit_id } });
    expect(res.status).toBe(201);
    return res.json.vm_id as string;
  };
  const setPublic = async (commit_id: string, is_public: boolean, key?: string) =>
    expect((await arbor.request('PATCH', `/api/v1/commits/${commit_id}`, { key, body: { is_public } })).status).toBe(200);
  const chainOf = async (commit_id: string, key?: string) => {
    const res = await arbor.request('GET', `/api/v1/vm/commits/${commit_id}/parents`, { key });
    expect(res.status).toBe(200);
    return res.json.map((c: { id: string }) => c.id) as string[];
  };

  it('serves a 12-generation chain nearest first, with four read-model queries in all', async () => {
    const lineage: string[] = [];
    let vm = await newRoot();
    for (let generation = 0; generation < 12; generation++) {
      lineage.unshift(await commitOf(vm));
      vm = await fromCommit(lineage[0]);
    }
    // Spies call through to the real store; they record which collections the request queries.
    const queries: string[] = [];
    const spies = (['find', 'findOne'] as const).map((method) => {
      const spy = jest.spyOn(arbor.infra.readModels, method);
      return { method, spy };
    });
    try {
      expect(await chainOf(lineage[0])).toEqual(lineage);
      for (const { method, spy } of spies) for (const [collection] of spy.mock.calls) queries.push(`${method} ${collection}`);
    } finally {
      spies.forEach(({ spy }) => spy.mockRestore());
    }
    // The commit by the id asked, its ancestor ids, every ancestor at once, and the org's names for
    // them: not one round trip per generation.
    expect(queries.sort()).toEqual([`find ${COMMIT_NAMES_COLLECTION}`, `find ${COMMITS_COLLECTION}`, `find ${COMMITS_COLLECTION}`, `findOne ${COMMIT_ANCESTORS_COLLECTION}`]);
  });

  it("ends before another org's private ancestor, even when older ancestors are readable again", async () => {
    const a1 = await commitOf(await newRoot());
    await setPublic(a1, true);
    const b1 = await commitOf(await fromCommit(a1, other.key), other.key);
    await setPublic(b1, true, other.key);
    const a2 = await commitOf(await fromCommit(b1));
    expect(await chainOf(a2)).toEqual([a2, b1, a1]);

    // b1 goes private: this org may no longer read it, so its chain ends before it (a1 is not shown
    // after a gap either: a chain is a path, and the org cannot see how a2 reaches a1).
    await setPublic(b1, false, other.key);
    expect(await chainOf(a2)).toEqual([a2]);
    expect((await arbor.request('GET', `/api/v1/vm/commits/${b1}/parents`)).status).toBe(404);
    // Its owner still reads the whole chain while a1 is public, and loses a1 once it is not.
    expect(await chainOf(b1, other.key)).toEqual([b1, a1]);
    await setPublic(a1, false);
    expect(await chainOf(b1, other.key)).toEqual([b1]);
  });

  it('ends before a deleted ancestor', async () => {
    const root = await newRoot();
    const c1 = await commitOf(root);
    const v1 = await fromCommit(c1);
    const c2 = await commitOf(v1);
    const c3 = await commitOf(await fromCommit(c2));
    expect(await chainOf(c3)).toEqual([c3, c2, c1]);
    expect((await arbor.request('DELETE', `/api/v1/vm/${v1}`)).status).toBe(200);
    expect((await arbor.request('DELETE', `/api/v1/commits/${c1}`)).status).toBe(204);
    expect(await chainOf(c3)).toEqual([c3, c2]);
    expect((await arbor.request('GET', `/api/v1/vm/commits/${c1}/parents`)).status).toBe(404);
  });
});
