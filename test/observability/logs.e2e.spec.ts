import { randomUUID } from 'node:crypto';
import { Vm } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { createLog } from '@arbor/observability';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pollUntil } from '../support/poll-until';

/** What the embedded service writes, line by line (pino's destination: anything with write()). */
class CapturedLog {
  readonly lines: string[] = [];
  write(chunk: string): void {
    this.lines.push(...chunk.split('\n').filter(Boolean));
  }
  entries(): Record<string, any>[] {
    return this.lines.map((line) => JSON.parse(line));
  }
}

/**
 * The structured log of the embedded service (JSON lines, here at `trace`, the most verbose):
 * a request's lines and the worker's lines for the events it caused carry one correlation id,
 * the events' own, and no secret shows in any line.
 */
describe('structured logs (embedded service, in-memory driver)', () => {
  let arbor: TestArbor;
  const log = new CapturedLog();

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' }, log: createLog({ level: 'trace', format: 'json' }, log) });
  });
  afterAll(async () => {
    await arbor?.destroy();
  });

  /** Creates a VM with these headers; returns its id, the answer's X-Correlation-Id and its events' correlation ids. */
  const createVm = async (headers: Record<string, string>) => {
    const created = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: {} }, headers });
    expect(created.status).toBe(201);
    const vm: string = created.json.vm_id;
    const events = await arbor.infra.eventStore.readStream(Vm.stream(vm));
    return { vm, answered: created.headers.get('x-correlation-id'), correlations: [...new Set(events.map((event) => event.metadata.correlation_id))] };
  };

  /** The request's line and the worker's line about the VM, found by the correlation id alone. */
  const expectLinesOf = async (correlation_id: string, vm: string) => {
    await pollUntil(async () => log.entries().some((entry) => entry.correlation_id === correlation_id && entry.component === 'http'));
    const lines = log.entries().filter((entry) => entry.correlation_id === correlation_id);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 'info', component: 'http', method: 'POST', route: '/api/v1/vm/new_root', status: 201, msg: 'POST /api/v1/vm/new_root 201' }),
        expect.objectContaining({ level: 'info', component: 'worker', msg: `worker: creating ${vm} on memory` }),
      ]),
    );
  };

  it("ties a request's lines and the worker's lines to the events it caused, by one correlation id (its own when the client sends none)", async () => {
    const { vm, answered, correlations } = await createVm({});
    expect(correlations).toEqual([answered]);
    await expectLinesOf(answered!, vm);
  });

  it("uses the client's X-Correlation-Id for the request's lines, its events and the worker's lines", async () => {
    const mine = randomUUID();
    const { vm, answered, correlations } = await createVm({ 'x-correlation-id': mine });
    expect({ answered, correlations }).toEqual({ answered: mine, correlations: [mine] });
    await expectLinesOf(mine, vm);
  });

  it('with an X-Idempotency-Key, logs the request under the command id its events carry (the same on a retry)', async () => {
    const headers = { 'x-idempotency-key': `create-${randomUUID()}` };
    const first = await createVm(headers);
    expect(first.correlations).toEqual([first.answered]);
    await expectLinesOf(first.answered!, first.vm);
    const retry = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: {} }, headers });
    expect({ vm: retry.json.vm_id, correlation: retry.headers.get('x-correlation-id') }).toEqual({ vm: first.vm, correlation: first.answered });
  });

  it('writes one JSON object a line, each with its time, level, and message', () => {
    for (const entry of log.entries()) expect(entry).toEqual(expect.objectContaining({ time: expect.any(String), level: expect.any(String), msg: expect.any(String) }));
  });

  it('never writes a secret: API keys, SSH private keys, webhook secrets, exec stdin and env, env vars, file contents', async () => {
    const vm = await arbor.bootVm();
    const secrets: string[] = [arbor.adminKey, arbor.adminKey.slice(36)];
    const sshKey = await arbor.request('GET', `/api/v1/vm/${vm}/ssh_key`);
    expect(sshKey.status).toBe(200);
    secrets.push(sshKey.json.ssh_private_key.split('\n')[1]);
    const webhook = await arbor.request('POST', '/arbor/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', event_types: ['EnvVarDeleted'] } });
    expect(webhook.status).toBe(201);
    secrets.push(webhook.json.secret, webhook.json.secret.replace(/^whsec_/, ''));
    const exec = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: ['cat'], stdin: 'stdin-secret-3b1f', env: { TOKEN: 'env-secret-9c2e' } } });
    expect(exec.status).toBe(200);
    secrets.push('stdin-secret-3b1f', 'env-secret-9c2e');
    expect((await arbor.request('PUT', '/api/v1/env_vars', { body: { vars: { DB_PASSWORD: 'envvar-secret-51aa' } } })).status).toBe(200);
    secrets.push('envvar-secret-51aa');
    const content = Buffer.from('file-secret-77d0').toString('base64');
    expect((await arbor.request('PUT', `/api/v1/vm/${vm}/files`, { body: { path: '/root/secret.txt', content_b64: content } })).status).toBe(200);
    secrets.push('file-secret-77d0', content);
    // A request with a wrong key, and one with a key in a header that is not read.
    const wrongKey = `${arbor.adminKey.slice(0, -1)}${arbor.adminKey.endsWith('0') ? '1' : '0'}`; // its last character changed
    expect((await arbor.request('GET', '/api/v1/vms', { key: wrongKey })).status).toBe(401);

    await pollUntil(async () => log.entries().filter((entry) => entry.component === 'http' && entry.path?.includes(vm)).length >= 3);
    const written = log.lines.join('\n');
    expect(log.lines.length).toBeGreaterThan(20);
    expect(secrets.filter((secret) => written.includes(secret))).toEqual([]);
  });
});
