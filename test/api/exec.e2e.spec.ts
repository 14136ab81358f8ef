import type { INestApplication } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { createApiApp } from '../../apps/api/src/create-api-app';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

type Line = { type: string; exec_id: string | null; cursor: number; stream?: string; data_b64?: string; exit_code?: number; message?: string };

/**
 * Exec through the log on the real sandbox driver: sync exec, NDJSON streams, attach by cursor,
 * the exec outliving its client and the API process, and logs as a projection of the output.
 */
describe('exec (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let baseUrl: string;
  /** The API app started by the restart test (the harness only knows the first one). */
  let restartedApi: INestApplication | null = null;
  let vmId: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    baseUrl = arbor.url;
    vmId = await newVm();
  }, 300_000);
  afterAll(async () => {
    await restartedApi?.close();
    await arbor?.destroy();
  });

  const newVm = async (): Promise<string> => {
    const res = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: { mem_size_mib: 256 } } });
    expect(res.status).toBe(201);
    return res.json.vm_id;
  };
  const post = (path: string, body: unknown, init: RequestInit = {}) =>
    fetch(baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${arbor.adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...init });
  const exec = (body: unknown, vm = vmId, key?: string) => arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body, key });
  const sh = (script: string, extra: Record<string, unknown> = {}) => ({ command: ['sh', '-c', script], ...extra });
  /** A whole NDJSON response: status, content type and parsed lines. */
  const streamed = async (path: string, body: unknown) => {
    const res = await post(path, body);
    const text = await res.text();
    const lines: Line[] = res.status === 200 ? text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
    return { status: res.status, type: res.headers.get('content-type'), text, lines };
  };
  const decode = (lines: Line[], stream = 'stdout') =>
    Buffer.concat(lines.filter((l) => l.type === 'chunk' && l.stream === stream).map((l) => Buffer.from(l.data_b64!, 'base64')));
  /** Reads a stream until `count` chunk lines arrived, then drops the connection. */
  const readThenDisconnect = async (path: string, body: unknown, count: number): Promise<Line[]> => {
    const abort = new AbortController();
    const res = await post(path, body, { signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let buffered = '';
    const lines: Line[] = [];
    while (lines.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += Buffer.from(value).toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts.filter(Boolean).map((l) => JSON.parse(l)));
    }
    abort.abort();
    await reader.cancel().catch(() => undefined);
    return lines;
  };

  it('a stream retried with the same X-Idempotency-Key follows the same exec again: one run, same output', async () => {
    const headers = { authorization: `Bearer ${arbor.adminKey}`, 'content-type': 'application/json', 'x-idempotency-key': randomUUID() };
    const body = JSON.stringify(sh('echo $$ >> /tmp/idempotent-runs; echo ran'));
    const once = async () => (await fetch(`${baseUrl}/api/v1/vm/${vmId}/exec/stream`, { method: 'POST', headers, body })).text();
    const [first, retry] = [await once(), await once()];
    expect(retry).toBe(first);
    expect(first.trim().split('\n').map((l) => JSON.parse(l).type)).toContain('exit');
    expect((await exec(sh('wc -l < /tmp/idempotent-runs'))).json.stdout.trim()).toBe('1');
  });

  describe('sync exec', () => {
    it('answers stdout, stderr and the exit code; a non-zero exit is still 200; exec_id is omitted', async () => {
      const res = await exec(sh('echo out; echo err >&2; exit 3'));
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
    });

    it('passes env, working_dir and stdin to the process', async () => {
      const res = await exec({ command: ['sh', '-c', 'echo "$GREETING"; pwd; cat'], env: { GREETING: 'hello there' }, working_dir: '/tmp', stdin: 'from stdin' });
      expect(res.json).toEqual({ exit_code: 0, stdout: 'hello there\n/tmp\nfrom stdin', stderr: '' });
    });

    it('kills the command at timeout_secs (exit code 124)', async () => {
      const res = await exec(sh('echo started; sleep 30; echo never', { timeout_secs: 1 }));
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ exit_code: 124, stdout: 'started\n', stderr: '' });
    });

    it('decodes output as lossy UTF-8, and echoes a client-chosen exec_id', async () => {
      const exec_id = randomUUID();
      const res = await exec(sh("printf 'caf\\303\\251 \\377!'", { exec_id }));
      expect(res.json).toEqual({ exit_code: 0, stdout: 'café \uFFFD!', stderr: '', exec_id });
    });
  });

  describe('streaming exec', () => {
    it('streams NDJSON chunk lines in order, then one exit line, with the exact shapes', async () => {
      const res = await streamed(`/api/v1/vm/${vmId}/exec/stream`, sh('for i in 1 2 3; do echo line-$i; sleep 0.1; done; echo oops >&2; exit 7'));
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^application\/x-ndjson/);
      expect(res.text.endsWith('\n')).toBe(true);
      const chunks = res.lines.slice(0, -1);
      const exit = res.lines[res.lines.length - 1];
      expect(chunks.length).toBeGreaterThanOrEqual(2); // output came as it was produced, not at the end
      for (const chunk of chunks) {
        expect(Object.keys(chunk).sort()).toEqual(['cursor', 'data_b64', 'exec_id', 'stream', 'type']);
        expect(chunk).toMatchObject({ type: 'chunk', exec_id: null });
        expect(chunk.data_b64).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
      }
      expect(chunks.map((c) => c.cursor)).toEqual(chunks.map((_, i) => i + 1));
      expect(exit).toEqual({ type: 'exit', exec_id: null, cursor: chunks.length + 1, exit_code: 7 });
      expect(decode(chunks).toString()).toBe('line-1\nline-2\nline-3\n');
      expect(decode(chunks, 'stderr').toString()).toBe('oops\n');
    });

    it('is binary safe', async () => {
      const res = await streamed(`/api/v1/vm/${vmId}/exec/stream`, sh('head -c 100000 /dev/urandom > /tmp/random.bin; cat /tmp/random.bin'));
      const bytes = decode(res.lines);
      expect(bytes.length).toBe(100_000);
      const inVm = await exec(sh('md5sum /tmp/random.bin'));
      expect(inVm.json.stdout.split(' ')[0]).toBe(createHash('md5').update(bytes).digest('hex'));
    });

    it('names the exec in every line when the client chose its id', async () => {
      const exec_id = randomUUID();
      const res = await streamed(`/api/v1/vm/${vmId}/exec/stream`, sh('echo named', { exec_id }));
      expect(res.lines.map((l) => l.exec_id)).toEqual(res.lines.map(() => exec_id));
      expect(res.lines.map((l) => l.type)).toEqual(['chunk', 'exit']);
    });
  });

  describe('attach', () => {
    const exec_id = randomUUID();
    const attach = (body: unknown, vm = vmId) => streamed(`/api/v1/vm/${vm}/exec/stream/attach`, body);

    beforeAll(async () => {
      const res = await streamed(`/api/v1/vm/${vmId}/exec/stream`, sh('for i in 1 2 3; do echo $i; sleep 0.05; done', { exec_id }));
      expect(res.lines.length).toBeGreaterThanOrEqual(3);
    });

    it('without a cursor replays the whole backlog, then the exit', async () => {
      const res = await attach({ exec_id });
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^application\/x-ndjson/);
      expect(decode(res.lines).toString()).toBe('1\n2\n3\n');
      expect(res.lines[0].cursor).toBe(1);
      expect(res.lines[res.lines.length - 1]).toMatchObject({ type: 'exit', exec_id, exit_code: 0 });
    });

    it('with a cursor replays only the chunks after it (exclusive)', async () => {
      const all = (await attach({ exec_id })).lines;
      const res = await attach({ exec_id, cursor: 1 });
      expect(res.lines).toEqual(all.slice(1));
    });

    it('from_latest skips the backlog (and ignores cursor)', async () => {
      const res = await attach({ exec_id, from_latest: true, cursor: 0 });
      expect(res.lines).toEqual([expect.objectContaining({ type: 'exit', exec_id, exit_code: 0 })]);
    });

    it('from_latest on a running exec gives only the output produced after attaching', async () => {
      const live = randomUUID();
      const first = await readThenDisconnect(`/api/v1/vm/${vmId}/exec/stream`, sh('echo early; sleep 1; echo late', { exec_id: live }), 1);
      expect(decode(first).toString()).toBe('early\n');
      const res = await attach({ exec_id: live, from_latest: true });
      expect(decode(res.lines).toString()).toBe('late\n');
      expect(res.lines[res.lines.length - 1]).toMatchObject({ type: 'exit', exit_code: 0 });
    });

    it('a client that disconnects mid-stream attaches later and gets everything, including what ran after it left', async () => {
      const id = randomUUID();
      const first = await readThenDisconnect(`/api/v1/vm/${vmId}/exec/stream`, sh('echo a; sleep 0.5; echo b > /tmp/after-disconnect; echo b', { exec_id: id }), 1);
      expect(decode(first).toString()).toBe('a\n');
      const res = await attach({ exec_id: id, cursor: first[0].cursor });
      expect(decode(res.lines).toString()).toBe('b\n');
      expect((await exec(sh('cat /tmp/after-disconnect'))).json.stdout).toBe('b\n');
      expect(decode((await attach({ exec_id: id })).lines).toString()).toBe('a\nb\n');
    });

    it('a cursor past the end of a finished exec answers at once with the exit alone', async () => {
      const all = (await attach({ exec_id })).lines;
      const exit = all[all.length - 1];
      for (const cursor of [exit.cursor, exit.cursor + 1, 1_000_000, Number.MAX_SAFE_INTEGER]) {
        const res = await attach({ exec_id, cursor });
        expect({ cursor, status: res.status, lines: res.lines }).toEqual({ cursor, status: 200, lines: [exit] });
      }
    });

    it('a cursor far past the output of a running exec follows it to its exit', async () => {
      const id = randomUUID();
      await readThenDisconnect(`/api/v1/vm/${vmId}/exec/stream`, sh('echo early; sleep 1; echo late', { exec_id: id }), 1);
      const res = await attach({ exec_id: id, cursor: 1_000_000 });
      expect(res.lines).toEqual([expect.objectContaining({ type: 'exit', exec_id: id, exit_code: 0 })]);
    });

    it('an unknown exec, or one of another VM, is 404 "exec not found"', async () => {
      const unknown = await post(`/api/v1/vm/${vmId}/exec/stream/attach`, { exec_id: randomUUID() });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({ error: 'exec not found', success: false });
      const otherVm = await newVm();
      const wrongVm = await post(`/api/v1/vm/${otherVm}/exec/stream/attach`, { exec_id });
      expect(wrongVm.status).toBe(404);
    });
  });

  it('survives an API restart: the exec runs on in the worker and attach still works', async () => {
    const id = randomUUID();
    const first = await readThenDisconnect(`/api/v1/vm/${vmId}/exec/stream`, sh('for i in 1 2 3 4 5; do echo $i; sleep 0.2; done', { exec_id: id }), 1);
    expect(decode(first).toString()).toBe('1\n');
    // Stop the HTTP app and start a new one on the same stores and port; the worker keeps running.
    await arbor.app.close();
    restartedApi = await createApiApp(arbor.infra);
    await restartedApi.listen(Number(new URL(arbor.url).port), '0.0.0.0');
    const res = await streamed(`/api/v1/vm/${vmId}/exec/stream/attach`, { exec_id: id });
    expect(decode(res.lines).toString()).toBe('1\n2\n3\n4\n5\n');
    expect(res.lines[res.lines.length - 1]).toMatchObject({ type: 'exit', exit_code: 0 });
  });

  describe('logs', () => {
    let logsVm: string;
    const logs = async (query: string) => {
      const res = await fetch(`${baseUrl}/api/v1/vm/${logsVm}/logs${query}`, { headers: { authorization: `Bearer ${arbor.adminKey}` } });
      return { status: res.status, json: (await res.json()) as any };
    };
    const text = (entries: { data_b64: string }[]) => entries.map((e) => Buffer.from(e.data_b64, 'base64').toString()).join('');

    beforeAll(async () => {
      logsVm = await newVm();
      for (let i = 1; i <= 5; i++) await exec(sh(`echo out-${i}`), logsVm);
      await exec(sh('echo err-1 >&2'), logsVm);
    });

    it('pages with offset/next_offset until eof, oldest first', async () => {
      const seen: { data_b64: string }[] = [];
      let offset = 0;
      for (let page = 0; page < 10; page++) {
        const res = await logs(`?offset=${offset}&max_entries=2`);
        expect(res.status).toBe(200);
        expect(res.json.entries.length).toBeLessThanOrEqual(2);
        seen.push(...res.json.entries);
        expect(res.json.next_offset).toBeGreaterThanOrEqual(offset);
        offset = res.json.next_offset;
        if (res.json.eof) break;
      }
      expect(text(seen)).toBe('out-1\nout-2\nout-3\nout-4\nout-5\nerr-1\n');
      const again = await logs(`?offset=${offset}`);
      expect(again.json).toEqual({ entries: [], next_offset: offset, eof: true });
    });

    it('gives each entry its exec, timestamp and stream, and filters by stream', async () => {
      const all = await logs('');
      expect(all.json.eof).toBe(true);
      expect(all.json.entries[0]).toEqual({ exec_id: expect.stringMatching(/^[0-9a-f-]{36}$/), timestamp: expect.any(String), stream: 'stdout', data_b64: expect.any(String) });
      expect(new Date(all.json.entries[0].timestamp).toISOString()).toBe(all.json.entries[0].timestamp);
      const stderr = await logs('?stream=stderr');
      expect(stderr.json.entries.map((e: { stream: string }) => e.stream)).toEqual(['stderr']);
      expect(text(stderr.json.entries)).toBe('err-1\n');
      expect(text((await logs('?max_entries=1')).json.entries)).toBe('out-1\n');
      expect((await logs('?max_entries=1')).json.eof).toBe(false);
    });

    it('validates its query: 400, as the contract answers a query string that does not deserialize', async () => {
      for (const query of ['?stream=stdin', '?offset=-1', '?max_entries=abc']) {
        const res = await logs(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.json.error).toMatch(/^Failed to deserialize query string: /);
      }
    });
  });

  describe('errors', () => {
    it('validates the body at the edge with a 422 naming the field', async () => {
      const missing = await exec({});
      expect(missing.status).toBe(422);
      expect(missing.json.error).toMatch(/command/);
      expect((await exec({ command: 'ls' })).status).toBe(422);
      expect((await exec({ command: ['ls', 1] })).status).toBe(422);
      const timeout = await exec({ command: ['true'], timeout_secs: -1 });
      expect(timeout.status).toBe(422);
      expect(timeout.json.error).toMatch(/timeout_secs/);
      expect((await exec({ command: ['true'], exec_id: 'not-a-uuid' })).status).toBe(422);
      expect((await arbor.request('POST', `/api/v1/vm/${vmId}/exec/stream/attach`, { body: { cursor: 1 } })).status).toBe(422);
      expect((await exec({ command: [] })).status).toBe(400);
      expect((await arbor.request('POST', '/api/v1/vm/not-a-uuid/exec', { body: { command: ['true'] } })).status).toBe(400);
    });

    it.each([
      ['a NUL byte in a command argument', { command: ['echo', 'a\0b'] }, 'command: command[1] contains a NUL byte'],
      ['a NUL byte in an env value', { command: ['true'], env: { A: 'b\0' } }, 'env: env.A contains a NUL byte'],
      ['a NUL byte in an env key', { command: ['true'], env: { 'A\0': 'b' } }, 'env: env key "A\\u0000" must be non-empty'],
      ["an env key with '='", { command: ['true'], env: { 'A=B': 'c' } }, 'env: env key "A=B" must be non-empty'],
      ['a NUL byte in working_dir', { command: ['pwd'], working_dir: '/tmp\0' }, 'working_dir: working_dir contains a NUL byte'],
      ['a megabyte-long argument', { command: ['echo', 'x'.repeat(1 << 20)] }, 'command: command[1] is 1048576 bytes; one entry may be at most 131071'],
      ['a megabyte-long env value', { command: ['true'], env: { A: 'x'.repeat(1 << 20) } }, 'env: env.A is 1048578 bytes'],
      ['a megabyte-long working_dir', { command: ['pwd'], working_dir: `/${'x'.repeat(1 << 20)}` }, 'working_dir: working_dir is 1048577 bytes; a path may be at most 4095'],
      ['arguments over 1 MiB in all', { command: ['echo', ...Array(9).fill('x'.repeat(128 * 1024 - 1))] }, 'command: command, env and working_dir together are'],
    ])('%s is a 422 naming the field, for exec and stream, and nothing is logged', async (_, body, message) => {
      const before = await arbor.infra.eventStore.headPosition();
      for (const path of ['exec', 'exec/stream']) {
        const res = await arbor.request('POST', `/api/v1/vm/${vmId}/${path}`, { body });
        expect({ path, status: res.status }).toEqual({ path, status: 422 });
        expect(res.json).toEqual({ error: expect.stringContaining(`Failed to deserialize the JSON body into the target type: ${message}`), success: false });
      }
      expect(await arbor.infra.eventStore.headPosition()).toBe(before);
    });

    it('takes arguments, env and working_dir up to the limits a process can be given', async () => {
      const longest = 'y'.repeat(128 * 1024 - 1);
      const res = await exec({ command: ['sh', '-c', 'printf %s "$1" | wc -c; printf %s "$BIG" | wc -c', 'sh', longest], env: { BIG: longest.slice(4) } });
      expect(res.json).toEqual({ exit_code: 0, stdout: '131071\n131067\n', stderr: '' });
    });

    it('a timeout longer than a timer can hold is a long timeout, not an immediate kill', async () => {
      const res = await exec({ command: ['echo', 'finished'], timeout_secs: 2 ** 31 });
      expect(res.json).toEqual({ exit_code: 0, stdout: 'finished\n', stderr: '' });
    });

    it('reusing an exec_id is a 409', async () => {
      const exec_id = randomUUID();
      expect((await exec({ command: ['true'], exec_id })).status).toBe(200);
      const again = await exec({ command: ['true'], exec_id });
      expect(again.status).toBe(409);
      expect(again.json).toEqual({ error: `exec ${exec_id} already exists`, success: false });
    });

    it('a paused VM answers 409 for exec and stream', async () => {
      const paused = await newVm();
      expect((await arbor.request('PATCH', `/api/v1/vm/${paused}/state`, { body: { state: 'Paused' } })).status).toBe(200);
      const res = await exec({ command: ['true'] }, paused);
      expect(res.status).toBe(409);
      expect(res.json).toEqual({ error: 'vm is paused', success: false });
      expect((await post(`/api/v1/vm/${paused}/exec/stream`, { command: ['true'] })).status).toBe(409);
    });

    it("another org's VM answers exactly like a missing one", async () => {
      const other = await issueKeyForNewOrg(arbor.infra.eventStore);
      const missing = randomUUID();
      for (const [method, path, body] of [
        ['POST', '/exec', { command: ['true'] }],
        ['POST', '/exec/stream', { command: ['true'] }],
        ['POST', '/exec/stream/attach', { exec_id: randomUUID() }],
        ['GET', '/logs', undefined],
      ] as const) {
        const foreign = await arbor.request(method, `/api/v1/vm/${vmId}${path}`, { key: other.key, body });
        const absent = await arbor.request(method, `/api/v1/vm/${missing}${path}`, { key: other.key, body });
        expect(foreign.status).toBe(404);
        expect({ status: foreign.status, body: foreign.json }).toEqual({ status: absent.status, body: absent.json });
      }
    });
  });

  it("puts every exec event in the feed, tied to the request by correlation and causation ids", async () => {
    const correlation = randomUUID();
    const exec_id = randomUUID();
    await arbor.request('POST', `/api/v1/vm/${vmId}/exec`, { body: sh('echo traced', { exec_id }), headers: { 'x-correlation-id': correlation } });
    const feed = (await arbor.request('GET', '/api/v1/events?type=ExecRequested&limit=1000')).json.events;
    // Exec ids are the org's: the stream is exec-<org>-<exec id>.
    const requested = feed.find((e: { stream_id: string; data: { exec_id: string } }) => e.data.exec_id === exec_id);
    expect(requested.stream_id).toBe(`exec-${requested.metadata.org_id}-${exec_id}`);
    expect(requested.metadata).toMatchObject({ correlation_id: correlation, actor_key_id: arbor.adminKey.slice(0, 36) });
    expect(requested.data).toMatchObject({ exec_id, vm_id: vmId, command: ['sh', '-c', 'echo traced'] });
    const all = (await arbor.request('GET', `/api/v1/events?after=${requested.position - 1}&limit=1000`)).json.events;
    const stream = all.filter((e: { stream_id: string }) => e.stream_id === requested.stream_id);
    expect(stream.map((e: { type: string }) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited']);
    for (const outcome of stream.slice(1)) {
      expect(outcome.metadata).toMatchObject({ correlation_id: correlation, causation_id: requested.event_id, actor_key_id: null });
    }
  });
});
