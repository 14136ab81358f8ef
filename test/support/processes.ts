import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '@arbor/application';
import type { SandboxDriver } from '@arbor/hypervisor';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { createSandboxDriver } from '../../apps/vm-worker/src/open-driver';
import { apiClient, httpClient } from './api-client';

const ROOT = projectRoot(__dirname);

/** Compiled entry points, so tests run the same files `npm run start:*` runs. */
export function distEntry(app: 'api' | 'projector' | 'vm-worker' | 'embedded' | 'edge', file = 'main.js'): string {
  const entry = join(ROOT, 'dist', 'apps', app, 'src', file);
  if (!existsSync(entry)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  return entry;
}

export interface RunningProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

/**
 * The store settings that select the embedded SQLite stores (empty counts as unset). Tests start
 * services on them by default, whatever the environment says (EVENTSTORE_URL/MONGODB_URL are set to
 * run the real-server contract suites); a test that wants the distributed adapters passes the URLs.
 */
export const EMBEDDED_STORES = { EVENTSTORE_URL: '', MONGODB_URL: '' } as const;

/**
 * Settings every test service starts with unless the test says otherwise: keys' usage is written
 * down once an hour rather than every minute, so a test that counts the log's events never meets
 * an ApiKeyUsed mid-way (the spec of `last_used_at` sets its own interval).
 */
export const TEST_SERVICE_DEFAULTS = { ARBOR_KEY_USAGE_FLUSH_MS: '3600000' } as const;

/** Any free ports for the edge, so processes started side by side (and other checkouts' tests) never share one. */
export const ANY_EDGE_PORTS = { EDGE_PORT: '0', EDGE_HTTP_PORT: '0' } as const;

/** Starts a built entry point with the test's environment, on the embedded stores unless `env` says otherwise. */
export function startProcess(entry: string, env: Record<string, string>): RunningProcess {
  const child = spawn(process.execPath, [entry], { cwd: ROOT, env: { ...process.env, ...EMBEDDED_STORES, ...TEST_SERVICE_DEFAULTS, ...ANY_EDGE_PORTS, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

export async function waitForOutput(process: RunningProcess, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(process.output())) {
    if (process.child.exitCode !== null) throw new Error(`process exited (${process.child.exitCode}) before printing ${pattern}:\n${process.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${process.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function stopProcess(process: RunningProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill(signal);
  await process.exited;
}

/** A TCP port nobody listens on right now, for a server process the test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface ProcessTrioOptions {
  /** The stores the three share (EMBEDDED_STORES unless it names others), and any other settings. */
  env: Record<string, string>;
  /** One data directory for the three, or one each (only the stores are shared then). */
  dataDirs: 'shared' | 'separate';
  /** Settings for the api alone, on top of `env`. */
  apiEnv?: Record<string, string>;
}

export interface ProcessTrio {
  api: RunningProcess;
  projector: RunningProcess;
  worker: RunningProcess;
  /** Each process's data directory (the same one when shared). */
  dirs: { api: string; projector: string; worker: string };
  apiUrl: string;
  /** Calls the api with the bootstrap admin key. */
  call: ReturnType<typeof apiClient>;
  /** The same, with every option of a request (headers, another key). */
  request: ReturnType<typeof httpClient>;
  /** The sandbox driver on the worker's data directory: the machines as the host sees them. */
  driver: SandboxDriver;
  /** Starts the api (again, on the same port) and waits until it listens. */
  startApi(): Promise<RunningProcess>;
  /** Starts a projector (again) and waits until it follows the log. */
  startProjector(): Promise<RunningProcess>;
  /** Starts a worker (again) and waits until it follows the log. */
  startWorker(timeoutMs?: number): Promise<RunningProcess>;
  /** Stops the processes, destroys the machines left on the host and removes the data directories. */
  stop(): Promise<void>;
}

/**
 * The distributed shape on the sandbox hypervisor: api, projector and vm-worker as three processes
 * (the built entry points docker compose runs), each started and waited for until it serves or
 * follows the log. A start that fails stops what it had started.
 */
export async function startProcessTrio(options: ProcessTrioOptions): Promise<ProcessTrio> {
  const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
  const env = { ...options.env, HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir };
  const dir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
  const shared = options.dataDirs === 'shared' ? dir('arbor-dist-') : undefined;
  const dirs = shared
    ? { api: shared, projector: shared, worker: shared }
    : { api: dir('arbor-dist-api-'), projector: dir('arbor-dist-projector-'), worker: dir('arbor-dist-worker-') };
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const driver = createSandboxDriver({ dataDir: dirs.worker, cacheDir });
  const startService = (app: 'projector' | 'vm-worker', dataDir: string) => startProcess(distEntry(app), { ...env, ARBOR_DATA_DIR: dataDir });
  const startApi = () => startProcess(distEntry('api'), { ...env, ...options.apiEnv, ARBOR_DATA_DIR: dirs.api, PORT: String(port) });
  const running = {
    api: startApi(),
    projector: startService('projector', dirs.projector),
    worker: startService('vm-worker', dirs.worker),
  };
  const stop = async () => {
    await Promise.all([running.api, running.projector, running.worker].map((p) => stopProcess(p)));
    for (const machine of await driver.list()) await driver.destroy(machine.vm_id);
    await driver.destroyWarmMachines(); // and what a killed worker left: its warm pool, machines half taken down
    for (const dataDir of new Set(Object.values(dirs))) rmSync(dataDir, { recursive: true, force: true });
  };
  let adminKey: string;
  try {
    await waitForOutput(running.api, /listening on port/);
    await waitForOutput(running.projector, /following the log/);
    await waitForOutput(running.worker, /following the log/, 300_000);
    adminKey = readFileSync(join(dirs.api, ADMIN_KEY_FILE), 'utf8').trim();
  } catch (error) {
    await stop();
    throw error;
  }
  return Object.assign(running, {
    dirs,
    apiUrl,
    call: apiClient(apiUrl, adminKey),
    request: httpClient(apiUrl, adminKey),
    driver,
    async startApi() {
      running.api = startApi();
      await waitForOutput(running.api, /listening on port/);
      return running.api;
    },
    async startProjector() {
      running.projector = startService('projector', dirs.projector);
      await waitForOutput(running.projector, /following the log/);
      return running.projector;
    },
    async startWorker(timeoutMs?: number) {
      running.worker = startService('vm-worker', dirs.worker);
      await waitForOutput(running.worker, /following the log/, timeoutMs);
      return running.worker;
    },
    stop,
  });
}

/** Steps of createPauseResumeDelete where a suite checks more. */
export interface LifecycleChecks {
  created?: (vmId: string) => Promise<void>;
  resumed?: (vmId: string) => Promise<void>;
  deleted?: (vmId: string) => Promise<void>;
}

/**
 * Creates a machine (wait_boot) with these labels through the trio's api, pauses, resumes and
 * deletes it, checking at each step what the host's sandbox driver sees.
 */
export async function createPauseResumeDelete(trio: ProcessTrio, labels: Record<string, string>, checks: LifecycleChecks = {}): Promise<void> {
  const { call, driver } = trio;
  const created = await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { labels } });
  expect(created.status).toBe(201);
  const vmId: string = created.json.vm_id;
  expect(await driver.status(vmId)).toBe('running');
  await checks.created?.(vmId);

  expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Paused' })).status).toBe(200);
  expect(await driver.status(vmId)).toBe('paused');
  expect((await call('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('paused');
  expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Running' })).status).toBe(200);
  await checks.resumed?.(vmId);

  expect((await call('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(200);
  expect(await driver.status(vmId)).toBeNull();
  await checks.deleted?.(vmId);
}
