import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type ArborConfig } from '../../libs/application/src/arbor-config';
import type { HypervisorDriver } from '../../libs/hypervisor/src/hypervisor-driver.port';
import { startEmbedded, type EmbeddedArbor } from '../../apps/embedded/src/embedded';
import { EMBEDDED_STORES } from './processes';

export interface TestArbor extends EmbeddedArbor {
  config: ArborConfig;
  adminKey: string;
  /** fetch against the running server with the admin key (override with options.key). */
  request(method: string, path: string, options?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<TestResponse>;
  /** Creates a VM with `wait_boot=true` (the admin key's org unless `key`) and returns its id; throws unless 201. */
  bootVm(vm_config?: Record<string, unknown>, options?: { key?: string }): Promise<string>;
  /** Stops the service and removes its data directory. */
  destroy(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  json: any;
}

/**
 * The embedded service on a fresh temporary data directory and a free port, as a user runs it.
 * It runs on the embedded stores even when EVENTSTORE_URL/MONGODB_URL are set for the real-server
 * contract suites: a test that wants the distributed adapters passes them in `env`.
 */
export async function startTestArbor(options: { driver?: HypervisorDriver; env?: Record<string, string>; dataDir?: string } = {}): Promise<TestArbor> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'arbor-test-'));
  const config = loadConfig({ ...process.env, ...EMBEDDED_STORES, ARBOR_DATA_DIR: dataDir, PORT: '0', ARBOR_WAIT_TIMEOUT_MS: '60000', ...options.env });
  const arbor = await startEmbedded(config, { driver: options.driver, log: () => {}, httpLogger: false });
  const adminKey = arbor.createdAdminKey ?? (await import('node:fs')).readFileSync(arbor.adminKeyFile, 'utf8').trim();
  const request: TestArbor['request'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? adminKey : opts.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(arbor.url + path, { method, headers, body });
    const text = await response.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };
  const bootVm: TestArbor['bootVm'] = async (vm_config = {}, opts = {}) => {
    const res = await request('POST', '/api/v1/vm/new_root?wait_boot=true', { key: opts.key, body: { vm_config } });
    if (res.status !== 201) throw new Error(`new_root answered ${res.status}: ${res.text}`);
    return res.json.vm_id as string;
  };
  return {
    ...arbor,
    config,
    adminKey,
    request,
    bootVm,
    async destroy() {
      // Stopping leaves machines running (a restart finds them again); tests clean them up.
      for (const machine of await arbor.driver.list()) await arbor.driver.destroy(machine.vm_id);
      await arbor.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
