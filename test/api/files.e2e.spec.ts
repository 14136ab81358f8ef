import { randomBytes, randomUUID } from 'node:crypto';
import { MAX_FILE_CONTENT_BYTES } from '@arbor/domain';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/**
 * GET/PUT /vm/{id}/files on the sandbox driver: whole files, base64, through the log (the worker
 * does the work on the host), with the contract's status codes for every way it can go wrong.
 */
describe('guest files (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let vm: string;
  let other: { key: string };

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
    vm = await arbor.bootVm();
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const put = (body: unknown, options: { vm?: string; key?: string; headers?: Record<string, string> } = {}) =>
    arbor.request('PUT', `/api/v1/vm/${options.vm ?? vm}/files`, { body, key: options.key, headers: options.headers });
  const get = (path: string, options: { vm?: string; key?: string } = {}) =>
    arbor.request('GET', `/api/v1/vm/${options.vm ?? vm}/files?path=${encodeURIComponent(path)}`, { key: options.key });
  /** Runs a shell command in the guest directly on the driver, to see what the API did. */
  const inGuest = async (script: string) => {
    let out = '';
    await arbor.driver.exec(vm, { argv: ['sh', '-c', script] }, (chunk) => (out += chunk.data.toString()));
    return out;
  };
  const expectEmpty200 = (res: { status: number; text: string; headers: Headers }) => {
    expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: '' });
    expect(res.headers.get('content-type')).toBeNull();
  };

  it('round-trips binary content exactly, with an empty 200 for the write', async () => {
    const content = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(3000)]);
    expectEmpty200(await put({ path: '/root/blob.bin', content_b64: content.toString('base64') }));
    const read = await get('/root/blob.bin');
    expect(read.status).toBe(200);
    expect(Buffer.from(read.json.content_b64, 'base64').equals(content)).toBe(true);
    expect(await inGuest('wc -c < /root/blob.bin')).toBe(`${content.length}\n`);
  });

  it('moves files up to the limit (several log events) and answers 413 beyond it', async () => {
    const content = randomBytes(MAX_FILE_CONTENT_BYTES);
    expectEmpty200(await put({ path: '/root/max.bin', content_b64: content.toString('base64') }));
    const read = await get('/root/max.bin');
    expect(read.status).toBe(200);
    expect(Buffer.from(read.json.content_b64, 'base64').equals(content)).toBe(true);

    const tooLarge = await put({ path: '/root/big.bin', content_b64: randomBytes(MAX_FILE_CONTENT_BYTES + 1).toString('base64') });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json).toEqual({ error: expect.stringContaining(String(MAX_FILE_CONTENT_BYTES)), success: false });
    expect(await inGuest('test -e /root/big.bin && echo yes || echo no')).toBe('no\n');

    // A guest file over the limit is not read into the log either.
    await inGuest(`head -c ${MAX_FILE_CONTENT_BYTES + 1} /dev/zero > /root/huge.bin`);
    const hugeRead = await get('/root/huge.bin');
    expect(hugeRead.status).toBe(413);
    expect(hugeRead.json.error).toContain(String(MAX_FILE_CONTENT_BYTES));
  });

  it('a body beyond the JSON limit is a 413 too', async () => {
    const res = await arbor.request('PUT', `/api/v1/vm/${vm}/files`, { rawBody: JSON.stringify({ path: '/x', content_b64: 'A'.repeat(17 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.json.success).toBe(false);
  });

  it('applies the mode in the guest (default 0644)', async () => {
    expectEmpty200(await put({ path: '/root/secret', content_b64: Buffer.from('s3cret').toString('base64'), mode: 0o600 }));
    expectEmpty200(await put({ path: '/root/plain', content_b64: Buffer.from('plain').toString('base64') }));
    expectEmpty200(await put({ path: '/root/tool.sh', content_b64: Buffer.from('#!/bin/sh\necho ran\n').toString('base64'), mode: 0o755 }));
    expect(await inGuest('stat -c %a /root/secret /root/plain /root/tool.sh')).toBe('600\n644\n755\n');
    expect(await inGuest('/root/tool.sh')).toBe('ran\n');
  });

  it('creates missing parent directories only with create_dirs', async () => {
    const body = { path: '/opt/app/conf/settings.json', content_b64: Buffer.from('{}').toString('base64') };
    const refused = await put(body);
    expect(refused.status).toBe(404);
    expect(refused.json).toEqual({ error: expect.stringContaining('create_dirs'), success: false });
    expectEmpty200(await put({ ...body, create_dirs: true }));
    expect(Buffer.from((await get(body.path)).json.content_b64, 'base64').toString()).toBe('{}');
  });

  it('answers 404 for a missing file and 400 for something that is not a file', async () => {
    const missing = await get('/root/does-not-exist');
    expect({ status: missing.status, body: missing.json }).toEqual({ status: 404, body: { error: 'file not found', success: false } });
    const directory = await get('/etc');
    expect(directory.status).toBe(400);
    expect(directory.json.error).toContain('not a regular file');
    const overDirectory = await put({ path: '/etc', content_b64: '' });
    expect(overDirectory.status).toBe(400);
  });

  it('validates at the edge naming the field: 400 for the query string, 422 for the body', async () => {
    const cases: [string, () => Promise<{ status: number; text: string }>, string, number][] = [
      ['no path', () => arbor.request('GET', `/api/v1/vm/${vm}/files`), 'path', 400],
      ['relative path', () => get('etc/hostname'), 'path', 400],
      ['NUL in path', () => get('/etc/host\0name'), 'path', 400],
      ['missing content', () => put({ path: '/root/x' }), 'content_b64', 422],
      ['invalid base64', () => put({ path: '/root/x', content_b64: 'not base64!' }), 'content_b64', 422],
      ['mode too large', () => put({ path: '/root/x', content_b64: '', mode: 0o10000 }), 'mode', 422],
      ['mode not an integer', () => put({ path: '/root/x', content_b64: '', mode: 4.2 }), 'mode', 422],
      ['create_dirs not a boolean', () => put({ path: '/root/x', content_b64: '', create_dirs: 'yes' }), 'create_dirs', 422],
    ];
    for (const [what, call, field, status] of cases) {
      const res = await call();
      expect({ what, status: res.status }).toEqual({ what, status });
      expect(res.text).toContain(field);
    }
    expect(await inGuest('test -e /root/x && echo yes || echo no')).toBe('no\n');
  });

  it('writes an empty file', async () => {
    expectEmpty200(await put({ path: '/root/empty', content_b64: '' }));
    expect((await get('/root/empty')).json).toEqual({ content_b64: '' });
  });

  it('refuses a paused VM with 409, and works again once it runs', async () => {
    expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Paused' } })).status).toBe(200);
    try {
      expect((await get('/root/plain')).status).toBe(409);
      expect((await put({ path: '/root/while-paused', content_b64: '' })).status).toBe(409);
    } finally {
      expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Running' } })).status).toBe(200);
    }
    expect(Buffer.from((await get('/root/plain')).json.content_b64, 'base64').toString()).toBe('plain');
    expect(await inGuest('test -e /root/while-paused && echo yes || echo no')).toBe('no\n');
  });

  it("answers another org's VM exactly like a missing one", async () => {
    const missing = randomUUID();
    for (const call of [
      (target: string) => get('/root/plain', { vm: target, key: other.key }),
      (target: string) => put({ path: '/root/intruder', content_b64: '' }, { vm: target, key: other.key }),
    ]) {
      const foreign = await call(vm);
      const absent = await call(missing);
      expect({ status: foreign.status, body: foreign.json }).toEqual({ status: 404, body: { error: 'vm not found', success: false } });
      expect({ status: absent.status, body: absent.json }).toEqual({ status: foreign.status, body: foreign.json });
    }
    expect(await inGuest('test -e /root/intruder && echo yes || echo no')).toBe('no\n');
  });

  it('shows the request and the worker outcome in the event feed under one correlation id', async () => {
    const correlation = randomUUID();
    expectEmpty200(await put({ path: '/root/audited', content_b64: Buffer.from('audit').toString('base64') }, { headers: { 'x-correlation-id': correlation } }));
    const feed = (await arbor.request('GET', '/api/v1/events?limit=1000')).json.events as { event_id: string; type: string; metadata: Record<string, string>; data: Record<string, unknown> }[];
    const mine = feed.filter((e) => e.metadata.correlation_id === correlation);
    expect(mine.map((e) => e.type)).toEqual(['FileContentChunk', 'FileWriteRequested', 'FileWritten']);
    expect(mine[1].data).toMatchObject({ vm_id: vm, path: '/root/audited', mode: 0o644 });
    expect(mine[2].metadata.causation_id).toBe(mine[1].event_id);
  });

  it('a retried write with the same X-Idempotency-Key is answered once and writes once', async () => {
    const headers = { 'x-idempotency-key': randomUUID() };
    const body = { path: '/root/once', content_b64: Buffer.from('first').toString('base64') };
    expectEmpty200(await put(body, { headers }));
    await inGuest('echo changed > /root/once');
    expectEmpty200(await put(body, { headers }));
    expect(await inGuest('cat /root/once')).toBe('changed\n');
  });
});
