import { gzipSync } from 'node:zlib';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/**
 * What clients met on the api's first HTTP stack (Express) and still meet on Fastify: how paths
 * match, how bodies are read, and that whatever the framework refuses leaves in the error envelope.
 */
describe('the HTTP stack (what clients rely on)', () => {
  let arbor: TestArbor;
  let vmId: string;
  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    vmId = await arbor.bootVm();
  });
  afterAll(() => arbor.destroy());

  const raw = (method: string, path: string, init: { headers?: Record<string, string>; body?: Buffer | string } = {}) =>
    fetch(arbor.url + path, { method, headers: { authorization: `Bearer ${arbor.adminKey}`, ...init.headers }, body: init.body });

  it('a path in other letter cases or with a trailing slash reaches the same route', async () => {
    const canonical = await arbor.request('GET', `/api/v1/vm/${vmId}/status`);
    expect(canonical.status).toBe(200);
    for (const path of [`/API/v1/VM/${vmId}/Status`, `/api/v1/vm/${vmId}/status/`, '/api/v1/VMS/']) {
      const res = await arbor.request('GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });

  it('a long path parameter reaches its route, which says what is wrong with it', async () => {
    const res = await arbor.request('GET', `/api/v1/vm/${'x'.repeat(2000)}/status`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: expect.stringMatching(/^Invalid URL: Cannot parse `x+` as a UUID$/), success: false });
  });

  it('a path with a broken %-escape → 400 in the error envelope', async () => {
    const res = await arbor.request('GET', '/api/v1/vm/%zz/status');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "'/api/v1/vm/%zz/status' is not a valid url component", success: false });
  });

  it('an unknown route → 404 naming it, in the error envelope', async () => {
    const res = await arbor.request('GET', '/api/v1/nowhere?x=1');
    expect({ status: res.status, body: res.json }).toEqual({ status: 404, body: { error: 'Cannot GET /api/v1/nowhere?x=1', success: false } });
  });

  it('a JSON body is read whatever its content type says, and gzip-encoded', async () => {
    const body = JSON.stringify({ command: ['echo', 'read'] });
    const asJson = await (await raw('POST', `/api/v1/vm/${vmId}/exec`, { headers: { 'content-type': 'application/json' }, body })).json();
    expect(asJson).toMatchObject({ exit_code: 0, stdout: expect.stringContaining('read') });
    const contentTypes: Record<string, string>[] = [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/octet-stream' }];
    for (const headers of contentTypes) {
      const res = await raw('POST', `/api/v1/vm/${vmId}/exec`, { headers, body });
      expect({ headers, status: res.status, body: await res.json() }).toEqual({ headers, status: 200, body: asJson });
    }
    const gzipped = await raw('POST', `/api/v1/vm/${vmId}/exec`, { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(body) });
    expect({ status: gzipped.status, body: await gzipped.json() }).toEqual({ status: 200, body: asJson });
  });

  it('an unsupported content encoding or a broken gzip body → 4xx in the error envelope, nothing appended', async () => {
    const before = await arbor.infra.eventStore.headPosition();
    const unsupported = await raw('POST', `/api/v1/vm/${vmId}/exec`, { headers: { 'content-type': 'application/json', 'content-encoding': 'x-unknown' }, body: '{}' });
    expect({ status: unsupported.status, body: await unsupported.json() }).toEqual({ status: 415, body: { error: expect.stringMatching(/^Failed to read the request body: /), success: false } });
    const broken = await raw('POST', `/api/v1/vm/${vmId}/exec`, { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: 'not gzip' });
    expect({ status: broken.status, body: await broken.json() }).toEqual({ status: 400, body: { error: expect.any(String), success: false } });
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  });

  it('a Content-Type that does not parse → 415 in the error envelope, nothing appended', async () => {
    const before = await arbor.infra.eventStore.headPosition();
    const res = await raw('POST', `/api/v1/vm/${vmId}/exec`, { headers: { 'content-type': 'not a media type' }, body: '{"command":["true"]}' });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 415, body: { error: expect.any(String), success: false } });
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  });

  it('repeated query keys are a list: an as_of given twice is refused as not one position', async () => {
    const res = await arbor.request('GET', '/api/v1/vms?as_of=1&as_of=2');
    expect(res.status).toBe(400);
    expect(res.json.success).toBe(false);
  });

  it('HEAD answers a GET route without a body', async () => {
    const res = await raw('HEAD', `/api/v1/vm/${vmId}/status`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });
});
