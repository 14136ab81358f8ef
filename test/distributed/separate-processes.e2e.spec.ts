import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { createSandboxDriver } from '../../apps/vm-worker/src/open-driver';
import { apiClient } from '../support/api-client';
import { distEntry, freePort, type RunningProcess, startProcess, stopProcess, waitForOutput } from '../support/processes';

/**
 * The distributed shape on one machine: api, projector and vm-worker as three processes (the
 * entry points docker compose runs) sharing only the stores — here the embedded SQLite files,
 * which several processes may open at once.
 */
describe('api, projector and vm-worker as separate processes', () => {
  let dir: string;
  let processes: RunningProcess[] = [];
  let call: ReturnType<typeof apiClient>;
  const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'arbor-dist-'));
    const port = await freePort();
    const env = { ARBOR_DATA_DIR: dir, PORT: String(port), HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir };
    const api = startProcess(distEntry('api'), env);
    const projector = startProcess(distEntry('projector'), env);
    const worker = startProcess(distEntry('vm-worker'), env);
    processes = [api, projector, worker];
    await waitForOutput(api, /listening on port/);
    await waitForOutput(projector, /following the log/);
    await waitForOutput(worker, /following the log/, 300_000);
    const key = readFileSync(join(dir, ADMIN_KEY_FILE), 'utf8').trim();
    call = apiClient(`http://127.0.0.1:${port}`, key);
  }, 320_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => stopProcess(p)));
    const driver = createSandboxDriver({ dataDir: dir, cacheDir });
    for (const machine of await driver.list()) await driver.destroy(machine.vm_id);
    rmSync(dir, { recursive: true, force: true });
  });

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

  /**
   * Stopping the worker, gracefully or not, leaves machines running; the next worker adopts them
   * (the very same init process), drives them, and DELETE still leaves nothing on the host.
   */
  it.each(['SIGTERM', 'SIGKILL'] as const)('the worker adopts the running machine after a restart by %s, and DELETE leaves no trace', async (signal) => {
    const vmId: string = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const driver = createSandboxDriver({ dataDir: dir, cacheDir });
    const initPid = async () => (await driver.list()).find((machine) => machine.vm_id === vmId)?.pid;
    const pid = await initPid();
    expect(pid).toEqual(expect.any(Number));
    expect(readFileSync('/proc/self/mounts', 'utf8')).toContain(vmId); // its disk, while it exists

    const [api, projector, worker] = processes;
    await stopProcess(worker, signal);
    expect(await driver.status(vmId)).toBe('running');
    const restarted = startProcess(distEntry('vm-worker'), { ARBOR_DATA_DIR: dir, HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir });
    processes = [api, projector, restarted];
    await waitForOutput(restarted, /following the log/);

    expect(await initPid()).toBe(pid);
    const exec = await call('POST', `/api/v1/vm/${vmId}/exec`, { command: ['sh', '-c', 'echo still here'] });
    expect(exec.status).toBe(200);
    expect(exec.json).toMatchObject({ exit_code: 0, stdout: 'still here\n' });
    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Paused' })).status).toBe(200);
    expect(await driver.status(vmId)).toBe('paused');

    expect((await call('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(200);
    expect(await driver.status(vmId)).toBeNull();
    expect(processExists(pid!)).toBe(false);
    expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(vmId);
  }, 120_000);
});

/** Whether any process has this pid (signal 0 checks without sending anything). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
