import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type ArborConfig } from '@arbor/application';
import type { HypervisorDriver } from '@arbor/hypervisor';
import pino from 'pino';
import { createLog, type Log, type LogLevel } from '@arbor/observability';
import { startEmbedded, type EmbeddedArbor } from '../../apps/embedded/src/embedded';
import { httpClient, type ApiAnswer, type RequestOptions } from './api-client';
import { logMismatches } from './event-catalogue-check';
import { ANY_EDGE_PORTS, EMBEDDED_STORES, TEST_SERVICE_DEFAULTS } from './processes';

export interface TestArbor extends EmbeddedArbor {
  config: ArborConfig;
  adminKey: string;
  /** fetch against the running server with the admin key (override with options.key). */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Creates a VM with `wait_boot=true` (the admin key's org unless `key`) and returns its id; throws unless 201. */
  bootVm(vm_config?: Record<string, unknown>, options?: { key?: string }): Promise<string>;
  /**
   * Checks every event the run appended against the event catalogue (issue 14: each event of the
   * log validates against its type's schema), stops the service and removes its data directory;
   * fails, naming the events, when any does not match.
   */
  destroy(): Promise<void>;
}

export type TestResponse = ApiAnswer;

/**
 * What the embedded service logs in tests: errors only (an unexpected 500's stack, a failed
 * reaction), straight to stderr so a CI log shows why a request failed; ARBOR_TEST_LOG_LEVEL
 * asks for more (or `silent`).
 */
const testLog = (): Log => createLog({ level: (process.env.ARBOR_TEST_LOG_LEVEL as LogLevel | undefined) ?? 'error', format: 'json' }, pino.destination({ dest: 2, sync: true }));

/**
 * Runs one step of a teardown and, should it still run after 20 s, says which on stderr: jest's
 * hook timeout (60 s) names only the hook, and a teardown that hung once under load could not be
 * told apart from a slow one.
 */
async function namedIfSlow<T>(step: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const timer = setTimeout(() => process.stderr.write(`test arbor teardown: ${step} still running after 20 s\n`), 20_000);
  try {
    return await run();
  } finally {
    clearTimeout(timer);
    const seconds = (Date.now() - started) / 1000;
    if (seconds >= 20) process.stderr.write(`test arbor teardown: ${step} took ${seconds.toFixed(1)} s\n`);
  }
}

/**
 * The embedded service on a fresh temporary data directory and a free port, as a user runs it.
 * It runs on the embedded stores even when EVENTSTORE_URL/MONGODB_URL are set for the real-server
 * contract suites: a test that wants the distributed adapters passes them in `env`.
 */
export async function startTestArbor(options: { driver?: HypervisorDriver; env?: Record<string, string>; dataDir?: string; log?: Log } = {}): Promise<TestArbor> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'arbor-test-'));
  const config = loadConfig({ ...process.env, ...EMBEDDED_STORES, ...TEST_SERVICE_DEFAULTS, ARBOR_DATA_DIR: dataDir, PORT: '0', ...ANY_EDGE_PORTS, ARBOR_WAIT_TIMEOUT_MS: '60000', ...options.env });
  const arbor = await startEmbedded(config, { driver: options.driver, log: options.log ?? testLog() });
  const adminKey = arbor.createdAdminKey ?? readFileSync(arbor.adminKeyFile, 'utf8').trim();
  const request = httpClient(arbor.url, adminKey);
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
      // Every suite's log is checked, whatever it did: a type's schema that misses what is written fails here.
      const mismatches = await namedIfSlow('checking the log against the event catalogue', () => logMismatches(arbor.infra.eventStore));
      // Stopping leaves machines running (a restart finds them again); tests clean them up.
      for (const machine of await arbor.driver.list()) await namedIfSlow(`destroying machine ${machine.vm_id}`, () => arbor.driver.destroy(machine.vm_id));
      await namedIfSlow('stopping the service', () => arbor.stop());
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (mismatches.length > 0) {
        const shown = mismatches.slice(0, 20).map((m) => `${m.type}${m.position === undefined ? '' : ` at ${m.position}`}: ${JSON.stringify(m.errors).slice(0, 400)}`);
        throw new Error(`${mismatches.length} event(s) of this run do not match the event catalogue (npm run catalogue, and an upcaster for a changed shape):\n${shown.join('\n')}`);
      }
    },
  };
}
