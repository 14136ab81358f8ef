import { randomUUID } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

describe('org isolation and idempotent writes (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;
  let other: { key: string; org_id: string };
  let vmId: string;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    arbor = await startTestArbor({ driver });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
    vmId = await arbor.bootVm();
  });
  afterAll(() => arbor.destroy());

  it("another org's VM answers exactly like a missing one", async () => {
    const missing = randomUUID();
    for (const [method, path, body] of [
      ['GET', '/status', undefined],
      ['GET', '/metadata', undefined],
      ['GET', '/events', undefined],
      ['PATCH', '/state', { state: 'Paused' }],
      ['PATCH', '/label', { labels: { x: 'y' } }],
      ['DELETE', '', undefined],
    ] as const) {
      const foreign = await arbor.request(method, `/api/v1/vm/${vmId}${path}`, { key: other.key, body });
      const absent = await arbor.request(method, `/api/v1/vm/${missing}${path}`, { key: other.key, body });
      expect({ status: foreign.status, body: foreign.json }).toEqual({ status: absent.status, body: absent.json });
      expect(foreign.status).toBeGreaterThanOrEqual(403);
    }
    expect((await arbor.request('GET', '/api/v1/vms', { key: other.key })).json).toEqual([]);
    expect(await driver.status(vmId)).toBe('running');
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).json.labels).toBeNull();
  });

  it("the event feed shows a key only its own org's events; the operator sees all", async () => {
    const mine = await arbor.request('GET', '/api/v1/events?limit=1000', { key: other.key });
    expect(mine.status).toBe(200);
    expect(mine.json.events.every((e: { metadata: { org_id: string } }) => e.metadata.org_id === other.org_id)).toBe(true);
    expect(mine.json.events.some((e: { stream_id: string }) => e.stream_id === `vm-${vmId}`)).toBe(false);
    const operator = await arbor.request('GET', '/api/v1/events?limit=1000');
    const orgs = new Set(operator.json.events.map((e: { metadata: { org_id: string } }) => e.metadata.org_id));
    expect(orgs.has(other.org_id)).toBe(true);
  });

  it('a retried new_root with the same X-Idempotency-Key returns the first result and creates one VM', async () => {
    const key = randomUUID();
    const headers = { 'x-idempotency-key': key };
    const first = await arbor.request('POST', '/api/v1/vm/new_root', { key: other.key, headers, body: { vm_config: {} } });
    const retry = await arbor.request('POST', '/api/v1/vm/new_root', { key: other.key, headers, body: { vm_config: {} } });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.json).toEqual(first.json);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const vms = (await arbor.request('GET', '/api/v1/vms', { key: other.key })).json;
    expect(vms.filter((vm: { vm_id: string }) => vm.vm_id === first.json.vm_id)).toHaveLength(1);
    expect(vms).toHaveLength(1);
  });

  it('concurrent retries with one idempotency key still create one VM', async () => {
    const headers = { 'x-idempotency-key': randomUUID() };
    const results = await Promise.all(
      [1, 2, 3].map(() => arbor.request('POST', '/api/v1/vm/new_root', { key: other.key, headers, body: { vm_config: {} } })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    const ids = new Set(results.map((r) => r.json.vm_id));
    expect(ids.size).toBe(1);
    const vms = (await arbor.request('GET', '/api/v1/vms', { key: other.key })).json;
    expect(vms.filter((vm: { vm_id: string }) => ids.has(vm.vm_id))).toHaveLength(1);
  });

  it('reusing an idempotency key for a different request is refused', async () => {
    const headers = { 'x-idempotency-key': randomUUID() };
    await arbor.request('POST', '/api/v1/vm/new_root', { key: other.key, headers, body: { vm_config: {} } });
    const misuse = await arbor.request('PATCH', `/api/v1/vm/${vmId}/label`, { headers, body: { labels: {} } });
    // A different org's request with the same key is simply a different key space.
    expect(misuse.status).toBe(200);
    const sameOrg = await arbor.request('POST', '/api/v1/keys/validate', { key: other.key, headers });
    expect(sameOrg.status).toBe(422);
  });
});
