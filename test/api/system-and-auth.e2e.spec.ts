import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

describe('system, auth and error envelope (HTTP)', () => {
  let arbor: TestArbor;
  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
  });
  afterAll(() => arbor.destroy());

  it('serves the version without a key, with the real git hash of the build', async () => {
    const res = await arbor.request('GET', '/api/v1/system/version', { key: null });
    expect(res.status).toBe(200);
    expect(res.json.executable_name).toBe('orchestrator');
    expect(res.json.workspace_version).toBe(require('../../package.json').version);
    const head = execFileSync('git', ['rev-parse', 'HEAD']).toString().trim();
    expect(res.json.git_hash).toBe(head);
  });

  it('creates the admin key once, stored 0600, and it validates', async () => {
    expect(arbor.createdAdminKey).toMatch(/^[0-9a-f-]{36}[0-9a-f]{64}$/);
    expect(statSync(arbor.adminKeyFile).mode & 0o777).toBe(0o600);
    const res = await arbor.request('POST', '/api/v1/keys/validate', { body: {} });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ valid: true, message: 'API key is valid' });
  });

  it.each([
    ['no key', null],
    ['a malformed key', 'not-a-key'],
    ['a well-formed unknown key', '00000000-0000-4000-8000-000000000000' + 'a'.repeat(64)],
  ])('answers 401 JSON for %s', async (_, key) => {
    const res = await arbor.request('GET', '/api/v1/vms', { key });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json).toEqual({ error: 'Unauthorized', success: false });
  });

  it('answers 401 for the right key id with a wrong secret', async () => {
    const forged = arbor.adminKey.slice(0, 36) + 'b'.repeat(64);
    expect((await arbor.request('POST', '/api/v1/keys/validate', { key: forged })).status).toBe(401);
  });

  it('answers unknown routes with the JSON error envelope', async () => {
    const res = await arbor.request('GET', '/api/v1/nope');
    expect(res.status).toBe(404);
    expect(res.json.success).toBe(false);
    expect(typeof res.json.error).toBe('string');
  });

  it('serves the OpenAPI document generated from the DTOs, and its UI', async () => {
    const doc = await arbor.request('GET', '/api/docs-json', { key: null });
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.json.paths)).toEqual(
      expect.arrayContaining(['/api/v1/vm/new_root', '/api/v1/vms', '/api/v1/vm/{vm_id}/state', '/api/v1/events', '/api/v1/system/version']),
    );
    expect(doc.json.components.schemas.VmCreateVmConfigDto.properties).toHaveProperty('vcpu_count');
    // Nullable fields say their type (a `number | null` is no object), so requests built from the document fit.
    expect(doc.json.components.schemas.VmCreateVmConfigDto.properties.vcpu_count.type).toEqual(['integer', 'null']);
    const shapeless = Object.entries(doc.json.components.schemas as Record<string, { properties?: Record<string, any> }>)
      .filter(([name]) => !name.endsWith('EventData'))
      .flatMap(([name, schema]) => Object.entries(schema.properties ?? {}).map(([property, s]) => ({ at: `${name}.${property}`, s })))
      .filter(({ s }) => [s.type].flat().includes('object') && !s.properties && !s.additionalProperties)
      .map(({ at }) => at);
    expect(shapeless).toEqual([]);
    // What needs no key says so: the catalogue is served to anyone, the audit feed asks for the key.
    expect(doc.json.paths['/api/v1/events/types'].get.security).toBeUndefined();
    expect(doc.json.paths['/api/v1/events'].get.security).toEqual([{ bearer: [] }]);
    expect((await arbor.request('GET', '/api/v1/events/types', { key: null })).status).toBe(200);
    const ui = await arbor.request('GET', '/api/docs', { key: null });
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
  });

  it('does not create a second admin key when restarted on the same data directory', async () => {
    const again = await startTestArbor({ driver: new InMemoryDriver(), dataDir: arbor.config.dataDir, env: { ARBOR_WORKER_ID: 'second' } });
    try {
      expect(again.createdAdminKey).toBeNull();
      expect(again.adminKey).toBe(arbor.adminKey);
    } finally {
      await again.stop();
    }
  });
});
