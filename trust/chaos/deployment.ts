import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxDriver } from '@arbor/hypervisor';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { createSandboxDriver } from '../../apps/vm-worker/src/open-driver';
import { distEntry, freePort, type RunningProcess, startProcess, startProcessTrio, stopProcess, waitForOutput } from '../../test/support/processes';

/** The processes `kill -9` hits: the three of the distributed shape, or the one embedded process. */
export type Role = 'api' | 'projector' | 'worker' | 'embedded';

/** Arbor as an operator runs it, on the sandbox driver, with its processes to kill and start again. */
export interface ChaosDeployment {
  shape: 'separate processes' | 'embedded';
  roles: Role[];
  apiUrl: string;
  adminKey: string;
  /** The data directory holding the log and the read models (shared by the three processes). */
  dataDir: string;
  /** The sandbox driver on the machines' data directory: the machines as the host sees them. */
  driver: SandboxDriver;
  /** `kill -9` of the role's process, waiting until it is gone. */
  kill(role: Role): Promise<void>;
  /** Starts the role's process again and waits until it serves or follows the log. */
  start(role: Role): Promise<void>;
  /** Stops everything, destroys the machines left and removes the data directory. */
  stop(): Promise<void>;
}

const CACHE_DIR = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
/** A request waits this long for a machine (a worker restarted mid-boot on a loaded machine takes a while). */
const WAIT_TIMEOUT = { ARBOR_WAIT_TIMEOUT_MS: '120000' };

/** api, projector and vm-worker as three processes on one data directory (test/support's trio). */
export async function separateProcesses(): Promise<ChaosDeployment> {
  const trio = await startProcessTrio({ env: WAIT_TIMEOUT, dataDirs: 'shared' });
  const processOf = (role: Role): RunningProcess => (role === 'api' ? trio.api : role === 'projector' ? trio.projector : trio.worker);
  return {
    shape: 'separate processes',
    roles: ['api', 'projector', 'worker'],
    apiUrl: trio.apiUrl,
    adminKey: readFileSync(join(trio.dirs.api, ADMIN_KEY_FILE), 'utf8').trim(),
    dataDir: trio.dirs.api,
    driver: trio.driver,
    kill: (role) => stopProcess(processOf(role), 'SIGKILL'),
    async start(role) {
      if (role === 'api') await trio.startApi();
      else if (role === 'projector') await trio.startProjector();
      else await trio.startWorker(300_000);
    },
    stop: () => trio.stop(),
  };
}

/** The whole control plane in one process (`npm start`'s entry point). */
export async function embeddedProcess(): Promise<ChaosDeployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-chaos-'));
  const port = await freePort();
  const driver = createSandboxDriver({ dataDir, cacheDir: CACHE_DIR });
  const launch = async () => {
    const started = startProcess(distEntry('embedded'), { ...WAIT_TIMEOUT, HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: CACHE_DIR, ARBOR_DATA_DIR: dataDir, PORT: String(port) });
    await waitForOutput(started, /listening on/, 300_000);
    return started;
  };
  const stop = async () => {
    await stopProcess(running);
    for (const machine of await driver.list()) await driver.destroy(machine.vm_id);
    await driver.destroyWarmMachines(); // and what a killed process left: its warm pool, machines half taken down
    rmSync(dataDir, { recursive: true, force: true });
  };
  let running: RunningProcess;
  try {
    running = await launch();
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    shape: 'embedded',
    roles: ['embedded'],
    apiUrl: `http://127.0.0.1:${port}`,
    adminKey: readFileSync(join(dataDir, ADMIN_KEY_FILE), 'utf8').trim(),
    dataDir,
    driver,
    kill: () => stopProcess(running, 'SIGKILL'),
    async start() {
      running = await launch();
    },
    stop,
  };
}
