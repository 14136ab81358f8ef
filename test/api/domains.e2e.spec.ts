import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext } from '@arbor/application';
import { CustomDomain, UUID_PATTERN } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';
import { pollUntil } from '../support/poll-until';

/**
 * The four domain operations over HTTP in the embedded process: what each answers, every 4xx of
 * each, the name unique across the installation, and a VM's domains freed when it is deleted.
 */
describe('domains (HTTP)', () => {
  let arbor: TestArbor;
  /** A unique name for each test, so tests share nothing but the installation's namespace. */
  const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}.example.com`;
  const newOrg = async () => {
    const { key, org_id } = await issueKeyForNewOrg(arbor.infra.eventStore);
    return { key, org_id, call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => arbor.request(method, path, { key, body, headers }) };
  };

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_EDGE_DOMAIN: 'arbor.test' } });
  });
  afterAll(async () => {
    await arbor?.destroy();
  });

  it('adds (201), lists (a bare array, by VM too), reads and deletes (200 {domain_id}) a domain', async () => {
    const { call } = await newOrg();
    const vm = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const other = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const name = unique('app');

    const created = await call('POST', '/api/v1/domains', { vm_id: vm, domain: name.toUpperCase() });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ domain_id: expect.stringMatching(UUID_PATTERN), vm_id: vm, domain: name, created_at: expect.any(String) });
    const second = (await call('POST', '/api/v1/domains', { vm_id: other, domain: `www.${name}.` })).json;
    expect(second.domain).toBe(`www.${name}`);

    expect((await call('GET', '/api/v1/domains')).json).toEqual([created.json, second]);
    expect((await call('GET', `/api/v1/domains?vm_id=${vm}`)).json).toEqual([created.json]);
    expect((await call('GET', `/api/v1/domains?vm_id=${randomUUID()}`)).json).toEqual([]);
    expect((await call('GET', `/api/v1/domains/${created.json.domain_id}`)).json).toEqual(created.json);

    const deleted = await call('DELETE', `/api/v1/domains/${created.json.domain_id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ domain_id: created.json.domain_id });
    expect((await call('GET', `/api/v1/domains/${created.json.domain_id}`)).status).toBe(404);
    expect((await call('GET', '/api/v1/domains')).json).toEqual([second]);

    // The name is free again, for anyone.
    const again = await (await newOrg()).call('POST', '/api/v1/domains', { vm_id: vm, domain: name });
    expect(again.status).toBe(404); // that VM is not the new org's
    const { call: third } = await newOrg();
    const thirdVm = (await third('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    expect((await third('POST', '/api/v1/domains', { vm_id: thirdVm, domain: name })).status).toBe(201);
  });

  it('answers 400 for a name that is not a host name (RFC 1123) or is one of the VMs\' own, naming the problem', async () => {
    const { call } = await newOrg();
    const vm = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const cases: [string, RegExp][] = [
      ['localhost', /fully qualified/],
      ['bad_name.example.com', /not a valid host name/],
      ['-x.example.com', /not a valid host name/],
      ['*.example.com', /not a valid host name/],
      ['example.com:443', /not a valid host name/],
      ['192.168.0.1', /an address, not a host name/],
      ['', /must not be empty/],
      [`${'a'.repeat(64)}.example.com`, /1-63/],
      ['café.example.com', /xn-- form/],
      [`${vm}.vm.arbor.test`, /under the VMs' own names \(vm\.arbor\.test\)/],
      ['VM.Arbor.Test', /under the VMs' own names/],
    ];
    for (const [domain, message] of cases) {
      const res = await call('POST', '/api/v1/domains', { vm_id: vm, domain });
      expect({ domain, status: res.status, success: res.json?.success }).toEqual({ domain, status: 400, success: false });
      expect(res.json.error).toMatch(message);
    }
    // Path and query ids that are not UUIDs: 400; a body of the wrong shape: 422 naming the field.
    expect((await call('GET', '/api/v1/domains/not-a-uuid')).status).toBe(400);
    expect((await call('DELETE', '/api/v1/domains/not-a-uuid')).status).toBe(400);
    const badQuery = await call('GET', '/api/v1/domains?vm_id=nope');
    expect(badQuery.status).toBe(400);
    expect(badQuery.json.error).toMatch(/vm_id must be a UUID/);
    for (const [body, field] of [[{ domain: unique('x') }, /vm_id/], [{ vm_id: vm }, /domain/], [{ vm_id: 'nope', domain: unique('x') }, /vm_id must be a UUID/], [{ vm_id: vm, domain: 42 }, /domain must be a string/]] as const) {
      const res = await call('POST', '/api/v1/domains', body);
      expect(res.status).toBe(422);
      expect(res.json.error).toMatch(field);
    }
    expect((await call('GET', '/api/v1/domains')).json).toEqual([]);
  });

  it("answers 404 for a missing VM, another org's VM, and another org's or a deleted domain", async () => {
    const mine = await newOrg();
    const theirs = await newOrg();
    const theirVm = (await theirs.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const theirDomain = (await theirs.call('POST', '/api/v1/domains', { vm_id: theirVm, domain: unique('theirs') })).json;

    for (const vm_id of [randomUUID(), theirVm]) {
      const res = await mine.call('POST', '/api/v1/domains', { vm_id, domain: unique('mine') });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'vm not found', success: false });
    }
    for (const method of ['GET', 'DELETE']) {
      expect((await mine.call(method, `/api/v1/domains/${theirDomain.domain_id}`)).json).toEqual({ error: 'domain not found', success: false });
      expect((await mine.call(method, `/api/v1/domains/${randomUUID()}`)).status).toBe(404);
    }
    expect((await mine.call('GET', `/api/v1/domains?vm_id=${theirVm}`)).json).toEqual([]);
    // Theirs is untouched, and a deleted domain is gone for its own org too.
    expect((await theirs.call('GET', `/api/v1/domains/${theirDomain.domain_id}`)).status).toBe(200);
    expect((await theirs.call('DELETE', `/api/v1/domains/${theirDomain.domain_id}`)).status).toBe(200);
    expect((await theirs.call('DELETE', `/api/v1/domains/${theirDomain.domain_id}`)).status).toBe(404);
  });

  it('answers 409 for a name in use, by the same org or any other, in any case', async () => {
    const first = await newOrg();
    const second = await newOrg();
    const name = unique('taken');
    const vm1 = (await first.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const vm2 = (await first.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const vm3 = (await second.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    expect((await first.call('POST', '/api/v1/domains', { vm_id: vm1, domain: name })).status).toBe(201);
    for (const [call, vm_id, domain] of [[first.call, vm1, name], [first.call, vm2, name], [second.call, vm3, name.toUpperCase()]] as const) {
      const res = await call('POST', '/api/v1/domains', { vm_id, domain });
      expect(res.status).toBe(409);
      expect(res.json).toEqual({ error: `domain '${name}' is already in use`, success: false });
    }
    // Two adds of one free name at once: exactly one wins.
    const race = unique('race');
    const answers = await Promise.all([first.call('POST', '/api/v1/domains', { vm_id: vm2, domain: race }), second.call('POST', '/api/v1/domains', { vm_id: vm3, domain: race })]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
  });

  it('a retry with the same X-Idempotency-Key answers the first domain again and adds nothing', async () => {
    const { call } = await newOrg();
    const vm = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const headers = { 'x-idempotency-key': randomUUID() };
    const body = { vm_id: vm, domain: unique('retry') };
    const first = await call('POST', '/api/v1/domains', body, headers);
    const retry = await call('POST', '/api/v1/domains', body, headers);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.json).toEqual(first.json);
    expect((await call('GET', '/api/v1/domains')).json).toHaveLength(1);
  });

  it("deleting a VM frees its domains (DomainRemoved, vm_deleted, correlated with the deletion); a deleted VM takes none", async () => {
    const { call } = await newOrg();
    const vm = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const keep = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const names = [unique('gone'), unique('gone2')];
    for (const domain of names) expect((await call('POST', '/api/v1/domains', { vm_id: vm, domain })).status).toBe(201);
    const kept = (await call('POST', '/api/v1/domains', { vm_id: keep, domain: unique('kept') })).json;

    const correlation = randomUUID();
    expect((await call('DELETE', `/api/v1/vm/${vm}`, undefined, { 'x-correlation-id': correlation })).status).toBe(200);
    // Answered once its domains are free: read your writes.
    expect((await call('GET', '/api/v1/domains')).json).toEqual([kept]);
    for (const name of names) {
      const events = await arbor.infra.eventStore.readStream(CustomDomain.stream(name));
      expect(events.map((e) => e.type)).toEqual(['DomainAdded', 'DomainRemoved']);
      expect(events[1].data).toMatchObject({ domain: name, vm_id: vm, reason: 'vm_deleted' });
      expect(events[1].metadata.correlation_id).toBe(correlation);
    }

    const onDeleted = await call('POST', '/api/v1/domains', { vm_id: vm, domain: unique('late') });
    expect(onDeleted.status).toBe(404);
    expect(onDeleted.json.error).toBe('vm not found');
    // The freed names can be taken again.
    expect((await call('POST', '/api/v1/domains', { vm_id: keep, domain: names[0] })).status).toBe(201);
  });

  it('a name added while its VM was being deleted is freed too (the race the api cannot see)', async () => {
    const { call, org_id } = await newOrg();
    const vm = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    // As an add that checked the VM just before its deletion would append it.
    const name = unique('raced');
    const aggregates = new AggregateRepository(arbor.infra.eventStore);
    const context = newCommandContext({ org_id, actor_key_id: null });
    await aggregates.handle(CustomDomain, name, { type: 'AddDomain', domain_id: randomUUID(), domain: name, vm_id: vm, org_id, now: new Date().toISOString() }, context);
    await pollUntil(async () => (await aggregates.load(CustomDomain, name)).state.held === null);
    const removed = (await arbor.infra.eventStore.readStream(CustomDomain.stream(name)))[1];
    expect(removed.data).toMatchObject({ vm_id: vm, reason: 'vm_deleted' });
  });

  it('answers 401 without a key', async () => {
    expect((await arbor.request('GET', '/api/v1/domains', { key: null })).status).toBe(401);
    expect((await arbor.request('POST', '/api/v1/domains', { key: null, body: { vm_id: randomUUID(), domain: unique('x') } })).status).toBe(401);
  });
});
