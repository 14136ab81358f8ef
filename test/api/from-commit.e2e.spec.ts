import { randomUUID } from 'node:crypto';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/**
 * POST /vm/from_commit is one creation, not a branch: 201 `{vm_id}` or a plain
 * `{"error","success":false}` (never the branch family's hybrid body), and a refused request
 * appends nothing. Sandbox driver.
 */
describe('POST /vm/from_commit (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let commitId: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    const vm = await arbor.bootVm();
    commitId = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id;
    expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'base', commit_id: commitId } })).status).toBe(201);
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const fromCommit = async (body: unknown, key?: string) => {
    const res = await arbor.request('POST', '/api/v1/vm/from_commit', { body, key });
    return { status: res.status, body: res.json };
  };
  /** The answer, and that nothing was appended to the log for it. */
  const refused = async (body: unknown, key?: string) => {
    const before = await arbor.infra.eventStore.headPosition();
    const answer = await fromCommit(body, key);
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
    return answer;
  };

  it('answers 201 with exactly {vm_id} from a commit id or an org tag', async () => {
    for (const body of [{ commit_id: commitId }, { commit_id: commitId.toUpperCase() }, { tag_name: 'base' }]) {
      const created = await fromCommit(body);
      expect(created).toEqual({ status: 201, body: { vm_id: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
      expect((await arbor.request('GET', `/api/v1/vm/${created.body.vm_id}/metadata`)).json.parent_commit_id).toBe(commitId);
    }
  });

  it('requires exactly one of commit_id, tag_name and ref (400)', async () => {
    const oneRequired = { status: 400, body: { error: 'exactly one of commit_id, tag_name or ref is required', success: false } };
    expect(await refused({})).toEqual(oneRequired);
    expect(await refused({ commit_id: commitId, tag_name: 'base' })).toEqual(oneRequired);
    expect(await refused({ commit_id: commitId, tag_name: 'base', ref: 'repo:tag' })).toEqual(oneRequired);
    expect(await refused({ commit_id: null, tag_name: null })).toEqual(oneRequired);
  });

  it('a malformed ref is a 400; a well-formed one names a repository, and a missing one is a 404', async () => {
    const format = { status: 400, body: { error: "Invalid ref format. Expected 'repo_name:tag_name'", success: false } };
    for (const ref of ['abc', 'repo:', ':tag', 'a:b:c']) expect(await refused({ ref })).toEqual(format);
    expect(await refused({ ref: 'myrepo:v1' })).toEqual({ status: 404, body: { error: 'repository not found', success: false } });
  });

  it("an unknown commit, or another org's private one, is 404 commit not found; an unknown tag 404 tag not found", async () => {
    const commitNotFound = { status: 404, body: { error: 'commit not found', success: false } };
    expect(await refused({ commit_id: randomUUID() })).toEqual(commitNotFound);
    const other = await issueKeyForNewOrg(arbor.infra.eventStore);
    expect(await refused({ commit_id: commitId }, other.key)).toEqual(commitNotFound);
    expect(await refused({ tag_name: 'base' }, other.key)).toEqual({ status: 404, body: { error: 'tag not found', success: false } });
    expect(await refused({ tag_name: 'no-such-tag' })).toEqual({ status: 404, body: { error: 'tag not found', success: false } });
  });

  it('branch/by_ref takes repository and tag from the path as they are: a ":" in either is a name, not a 500', async () => {
    for (const path of ['myrepo/v1', 'my%3Arepo/v1', 'myrepo/v%3A1']) {
      const res = await arbor.request('POST', `/api/v1/vm/branch/by_ref/${path}`);
      expect({ path, status: res.status, body: res.json }).toEqual({ path, status: 404, body: { vms: [], error: 'repository not found' } });
    }
  });
});
