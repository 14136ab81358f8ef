import { randomUUID } from 'node:crypto';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/**
 * Another org's VM, private commit or tag answers exactly like one that does not exist — same
 * status, same body — on the write paths of VMs, commits and branches, and nothing is appended to
 * the other org's streams. Sandbox driver.
 */
type Call = { method: string; path: string; body?: unknown };

describe("another org's resources answer like missing ones (HTTP, sandbox driver)", () => {
  let arbor: TestArbor;
  let outsider: string;
  let vm: string;
  let privateCommit: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    outsider = (await issueKeyForNewOrg(arbor.infra.eventStore)).key;
    vm = await arbor.bootVm();
    privateCommit = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id;
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const asOutsider = async (method: string, path: string, body?: unknown) => {
    const res = await arbor.request(method, path, { key: outsider, body });
    return { status: res.status, body: res.json };
  };

  it.each([
    ['POST /vm/{id}/commit', 'vm', (id: string): Call => ({ method: 'POST', path: `/api/v1/vm/${id}/commit` }), { status: 404, body: { error: 'vm not found', success: false } }],
    ['PATCH /vm/{id}/disk', 'vm', (id: string): Call => ({ method: 'PATCH', path: `/api/v1/vm/${id}/disk`, body: { fs_size_mib: 4096 } }), { status: 404, body: { error: 'vm not found', success: false } }],
    ['POST /vm/branch/by_vm/{id}', 'vm', (id: string): Call => ({ method: 'POST', path: `/api/v1/vm/branch/by_vm/${id}` }), { status: 404, body: { vms: [], error: 'vm not found' } }],
    ['POST /vm/{id}/branch (a VM)', 'vm', (id: string): Call => ({ method: 'POST', path: `/api/v1/vm/${id}/branch` }), { status: 404, body: { error: 'commit not found', success: false } }],
    ['POST /vm/{id}/branch (a commit)', 'commit', (id: string): Call => ({ method: 'POST', path: `/api/v1/vm/${id}/branch` }), { status: 404, body: { error: 'commit not found', success: false } }],
    ['POST /vm/branch/by_commit/{id}', 'commit', (id: string): Call => ({ method: 'POST', path: `/api/v1/vm/branch/by_commit/${id}` }), { status: 404, body: { error: 'commit not found', success: false } }],
    ['POST /commit_tags', 'commit', (id: string): Call => ({ method: 'POST', path: '/api/v1/commit_tags', body: { tag_name: 'theirs', commit_id: id } }), { status: 404, body: { error: 'commit not found', success: false } }],
  ] as const)('%s', async (_, kind, call, expected) => {
    const foreign = kind === 'vm' ? vm : privateCommit;
    const before = await arbor.infra.eventStore.headPosition();
    const request = call(foreign);
    const answer = await asOutsider(request.method, request.path, request.body);
    expect(answer).toEqual(expected);
    // Exactly what an id nobody has gets.
    const missing = call(randomUUID());
    expect(await asOutsider(missing.method, missing.path, missing.body)).toEqual(answer);
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  });

  it('and a foreign tag name is simply a tag the org does not have', async () => {
    expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: 'ours', commit_id: privateCommit } })).status).toBe(201);
    const foreign = await asOutsider('POST', '/api/v1/vm/branch/by_tag/ours');
    expect(foreign).toEqual({ status: 404, body: { error: 'tag not found', success: false } });
    expect(await asOutsider('POST', '/api/v1/vm/branch/by_tag/nobodys')).toEqual(foreign);
    expect(await asOutsider('POST', '/api/v1/vm/from_commit', { tag_name: 'ours' })).toEqual(foreign);
  });
});
