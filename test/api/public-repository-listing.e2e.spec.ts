import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

interface Listed {
  repo_id: string;
  org_name: string;
  name: string;
  full_name: string;
  created_at: string;
  description: string | null;
}

/**
 * `GET /api/v1/public/repositories` over many repositories of several orgs: every public one and
 * nothing else, each exactly as the contract shapes it, ordered by org name then name whatever
 * order they were made in, and a change shown the moment it answered.
 */
describe('the public repository listing (HTTP)', () => {
  let arbor: TestArbor;
  const keys = new Map<string, string | undefined>();

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    keys.set('default', undefined); // the admin key's org
    for (const name of ['zeta-org', 'alpha-org']) keys.set(name, (await issueKeyForNewOrg(arbor.infra.eventStore, name)).key);
  });
  afterAll(() => arbor.destroy());

  const listed = async (): Promise<Listed[]> => {
    const answer = await arbor.request('GET', '/api/v1/public/repositories', { key: null });
    expect(answer.status).toBe(200);
    return (answer.json as { repositories: Listed[] }).repositories;
  };
  const inOrder = (repositories: Listed[]) => [...repositories].sort((a, b) => (a.org_name < b.org_name ? -1 : a.org_name > b.org_name ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const publish = (org: string, name: string, is_public: boolean) =>
    arbor.request('PATCH', `/api/v1/repositories/${name}/visibility`, { key: keys.get(org), body: { is_public } });

  it('lists every public repository of every org, in the contract shape, by org name then name', async () => {
    const names = ['web', 'Zed', 'api', 'a.b', 'a_b', 'a-b', '0day', 'api2', 'B', 'b', 'db', 'queue', 'cache', 'x', 'worker', 'ui', 'docs', 'infra'];
    const expected: Listed[] = [];
    // Made interleaved across orgs and out of name order; every third stays private.
    for (const [i, name] of names.entries()) {
      for (const org of keys.keys()) {
        const description = i % 2 ? `${org}'s ${name}` : undefined;
        const created = await arbor.request('POST', '/api/v1/repositories', { key: keys.get(org), body: { name, description } });
        expect(created.status).toBe(201);
        if (i % 3 === 2) continue;
        expect((await publish(org, name, true)).status).toBe(204);
        expected.push({ repo_id: created.json.repo_id, org_name: org, name, full_name: `${org}/${name}`, created_at: expect.any(String), description: description ?? null });
      }
    }

    const repositories = await listed();
    expect(repositories).toEqual(inOrder(expected));
    expect(repositories.map((r) => r.full_name).slice(0, 4)).toEqual(['alpha-org/0day', 'alpha-org/Zed', 'alpha-org/a.b', 'alpha-org/a_b']);
    for (const repository of repositories) expect(Object.keys(repository).sort()).toEqual(['created_at', 'description', 'full_name', 'name', 'org_name', 'repo_id']);
  });

  it('shows each change once it answered: made public, made private, deleted, made', async () => {
    const before = await listed();
    expect((await publish('zeta-org', 'a-b', true)).status).toBe(204); // private until now
    const published = await listed();
    expect(published).toHaveLength(before.length + 1);
    expect(published).toEqual(inOrder(published));
    expect(published.map((r) => r.full_name)).toContain('zeta-org/a-b');

    expect((await publish('alpha-org', 'web', false)).status).toBe(204);
    expect((await arbor.request('DELETE', '/api/v1/repositories/db', { key: keys.get('default') })).status).toBe(204);
    expect((await arbor.request('POST', '/api/v1/repositories', { key: keys.get('zeta-org'), body: { name: 'aaa' } })).status).toBe(201);
    const changed = await listed();
    expect(changed.map((r) => r.full_name)).toEqual(published.map((r) => r.full_name).filter((name) => name !== 'alpha-org/web' && name !== 'default/db'));
  });
});
