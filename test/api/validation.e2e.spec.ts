import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/** Bad input gets a clear 4xx that names what is wrong, and nothing is appended to the log. */
describe('input validation at the edge (HTTP)', () => {
  let arbor: TestArbor;
  let vmId: string;
  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    vmId = await arbor.bootVm();
  });
  afterAll(() => arbor.destroy());

  const headPosition = () => arbor.infra.eventStore.headPosition();

  it.each([
    ['a negative vcpu_count', { vm_config: { vcpu_count: -1 } }, 'vm_config.vcpu_count'],
    ['a fractional mem_size_mib', { vm_config: { mem_size_mib: 1.5 } }, 'vm_config.mem_size_mib'],
    ['a string fs_size_mib', { vm_config: { fs_size_mib: 'big' } }, 'vm_config.fs_size_mib'],
    ['labels with a non-string value', { vm_config: { labels: { a: 1 } } }, 'labels'],
    ['no vm_config', {}, 'vm_config'],
  ])('new_root with %s → 422 naming the field, nothing appended', async (_, body, field) => {
    const before = await headPosition();
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { body });
    expect(res.status).toBe(422);
    expect(res.json.success).toBe(false);
    expect(res.json.error).toContain(field);
    expect(await headPosition()).toBe(before);
  });

  it('an unknown image_name → 404 naming the image, nothing appended; "default" is the one base image', async () => {
    const before = await headPosition();
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: { image_name: 'ubuntu-24.04' } } });
    expect({ status: res.status, body: res.json }).toEqual({ status: 404, body: { error: 'image not found: ubuntu-24.04', success: false } });
    expect(await headPosition()).toBe(before);
    expect((await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: { image_name: 'default' } } })).status).toBe(201);
  });

  it('a query string that does not deserialize → 400 naming the parameter (axum), not 422', async () => {
    const res = await arbor.request('GET', '/api/v1/commits?limit=abc');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: expect.stringMatching(/^Failed to deserialize query string: limit/), success: false });
  });

  it('malformed JSON → 400 saying the body is not JSON', async () => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { rawBody: '{"vm_config": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^Failed to parse the request body as JSON/);
  });

  it.each([
    ['arrays', (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`],
    ['objects', (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`],
  ])('a body of %s nested thousands of levels deep → 400 before it is parsed, nothing appended', async (_, nested) => {
    const before = await headPosition();
    for (const [method, path, body] of [
      ['POST', '/api/v1/vm/new_root', `{"vm_config":{"labels":${nested(5000)}}}`],
      ['POST', `/api/v1/vm/${vmId}/exec`, `{"command":${nested(5000)}}`],
      ['PATCH', `/api/v1/vm/${vmId}/label`, nested(100_000)],
      ['PUT', '/api/v1/env_vars', `{"vars":${nested(5000)}}`],
    ] as const) {
      const res = await arbor.request(method, path, { rawBody: body, headers: { 'content-type': 'application/json' } });
      expect({ path, status: res.status, body: res.json }).toEqual({
        path,
        status: 400,
        body: { error: 'Failed to parse the request body as JSON: nested deeper than 32 levels', success: false },
      });
    }
    expect(await headPosition()).toBe(before);
  });

  it('nesting up to 32 levels is parsed as usual, and brackets inside strings do not count', async () => {
    const deepButFine = `{"vm_config":{"labels":{"a":"${'['.repeat(1000)}"}},"x":${'['.repeat(30)}${']'.repeat(30)}}`;
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { rawBody: deepButFine, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(201);
  });

  it('a charset other than UTF → 415 saying so, not a 500', async () => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { rawBody: '{"vm_config":{}}', headers: { 'content-type': 'application/json; charset=latin1' } });
    expect({ status: res.status, body: res.json }).toEqual({ status: 415, body: { error: 'Failed to read the request body: unsupported charset "LATIN1"', success: false } });
  });

  it('ignores unknown fields (clients add them)', async () => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: { vcpu_count: 1, future_field: true }, extra: 1 } });
    expect(res.status).toBe(201);
  });

  it('state must be capitalised: "running" → 422', async () => {
    const res = await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'running' } });
    expect(res.status).toBe(422);
    expect(res.json.error).toContain('state');
  });

  it('a path id that is not a UUID → 400', async () => {
    const res = await arbor.request('GET', '/api/v1/vm/not-a-uuid/status');
    expect(res.status).toBe(400);
    expect(res.json.error).toContain('not-a-uuid');
  });

  it.each([
    ['a 2 MB path', 'GET', `/api/v1/vm/${'n'.repeat(2_000_000)}/status`],
    // 17 MB on the wire, sent while the server has long since answered: it must wait for the client, not reset it.
    ['a path of 1.4 million emoji, with a body', 'PATCH', `/api/v1/commit_tags/${encodeURIComponent('😀'.repeat(1_400_000))}`],
  ])('%s → 431 with the error envelope, answered to the end, nothing appended', async (_, method, path) => {
    const before = await headPosition();
    const res = await arbor.request(method, path, method === 'GET' ? {} : { body: { commit_id: vmId } });
    expect(res.status).toBe(431);
    expect(res.json).toEqual({ error: expect.stringMatching(/^the request line and headers must be at most \d+ bytes together$/), success: false });
    expect(await headPosition()).toBe(before);
    // The server still answers what comes next.
    expect((await arbor.request('GET', `/api/v1/vm/${vmId}/status`)).status).toBe(200);
  });

  it('a query boolean that is not true/false → 400', async () => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=yes', { body: { vm_config: {} } });
    expect(res.status).toBe(400);
    expect(res.json.error).toContain('wait_boot');
  });

  it('an unknown VM → 404 "vm not found" on reads and writes; delete answers 403 like the contract', async () => {
    const missing = '00000000-0000-4000-8000-000000000001';
    for (const [method, path, body] of [
      ['GET', `/api/v1/vm/${missing}/status`, undefined],
      ['GET', `/api/v1/vm/${missing}/metadata`, undefined],
      ['PATCH', `/api/v1/vm/${missing}/state`, { state: 'Paused' }],
      ['PATCH', `/api/v1/vm/${missing}/label`, { labels: {} }],
    ] as const) {
      const res = await arbor.request(method, path, { body });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'vm not found', success: false });
    }
    expect((await arbor.request('DELETE', `/api/v1/vm/${missing}`)).json).toEqual({ error: 'Forbidden', success: false });
  });
});
