import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { createSandboxDriver } from '../../apps/vm-worker/src/open-driver';
import { distEntry, type RunningProcess, startProcess, stopProcess, waitForOutput } from '../support/processes';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });

/**
 * The distributed shape on one machine: api, projector and vm-worker as three processes (the
 * entry points docker compose runs) sharing only the stores — here the embedded SQLite files,
 * which several processes may open at once.
 */
describe('api, projector and vm-worker as separate processes', () => {
  let dir: string;
  let processes: RunningProcess[] = [];
  let url: string;
  let key: string;
  const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'arbor-dist-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const env = { ARBOR_DATA_DIR: dir, PORT: String(port), HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir };
    const api = startProcess(distEntry('api'), env);
    const projector = startProcess(distEntry('projector'), env);
    const worker = startProcess(distEntry('vm-worker'), env);
    processes = [api, projector, worker];
    await waitForOutput(api, /listening on port/);
    await waitForOutput(projector, /following the log/);
    await waitForOutput(worker, /following the log/, 300_000);
    key = readFileSync(join(dir, ADMIN_KEY_FILE), 'utf8').trim();
  }, 320_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => stopProcess(p)));
    const driver = createSandboxDriver({ dataDir: dir, cacheDir });
    for (const machine of await driver.list()) await driver.destroy(machine.vm_id);
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  };

  it('creates, pauses, resumes and deletes a real machine through three cooperating processes', async () => {
    const created = await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { labels: { via: 'processes' } } });
    expect(created.status).toBe(201);
    const vmId = created.json.vm_id;
    const driver = createSandboxDriver({ dataDir: dir, cacheDir });
    expect(await driver.status(vmId)).toBe('running');
    expect((await call('GET', `/api/v1/vm/${vmId}/status`)).json).toMatchObject({ state: 'running', labels: { via: 'processes' } });

    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Paused' })).status).toBe(200);
    expect(await driver.status(vmId)).toBe('paused');
    expect((await call('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('paused');
    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Running' })).status).toBe(200);

    expect((await call('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(200);
    expect(await driver.status(vmId)).toBeNull();
  }, 120_000);

  it('the worker survives its own restart: the running machine is found again, not leaked or killed', async () => {
    const vmId = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const [api, projector, worker] = processes;
    await stopProcess(worker);
    const driver = createSandboxDriver({ dataDir: dir, cacheDir });
    expect(await driver.status(vmId)).toBe('running');
    const restarted = startProcess(distEntry('vm-worker'), { ARBOR_DATA_DIR: dir, HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir });
    processes = [api, projector, restarted];
    await waitForOutput(restarted, /following the log/);
    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Paused' })).status).toBe(200);
    expect(await driver.status(vmId)).toBe('paused');
    expect((await call('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(200);
    expect(await driver.status(vmId)).toBeNull();
  }, 120_000);
});
