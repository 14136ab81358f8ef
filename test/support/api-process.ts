import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_DB } from '@arbor/application';
import { type EventStore, SqliteEventStore } from '@arbor/event-store';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { httpClient } from './api-client';
import { distEntry, freePort, startProcess, stopProcess, waitForOutput, type RunningProcess } from './processes';

export interface ApiProcess {
  url: string;
  dataDir: string;
  adminKey: string;
  /** HTTP calls with the admin key (options.key for another). */
  request: ReturnType<typeof httpClient>;
  /** The api's SQLite event store, opened here too: what a test appends is in the api's log at once. */
  store: EventStore;
  /** The running api process (a new one after each restart). */
  process(): RunningProcess;
  /** Stops the api (SIGKILL unless told otherwise) and starts it again on the same port and data. */
  restart(signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The api alone as its own process (the built entry `npm run start:api` runs) on a fresh data
 * directory: no projector, no worker, no hypervisor. For the endpoints that read the log itself
 * (the feed, its stream and export), with the test writing events into the shared SQLite store.
 */
export async function startApiProcess(env: Record<string, string> = {}): Promise<ApiProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-api-'));
  const port = await freePort();
  const start = async () => {
    const started = startProcess(distEntry('api'), { ...env, ARBOR_DATA_DIR: dataDir, PORT: String(port) });
    try {
      await waitForOutput(started, /listening on port/);
    } catch (error) {
      await stopProcess(started, 'SIGKILL');
      throw error;
    }
    return started;
  };
  let running: RunningProcess;
  try {
    running = await start();
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const url = `http://127.0.0.1:${port}`;
  const adminKey = readFileSync(join(dataDir, ADMIN_KEY_FILE), 'utf8').trim();
  const store = SqliteEventStore.open(join(dataDir, EVENTS_DB));
  return {
    url,
    dataDir,
    adminKey,
    request: httpClient(url, adminKey),
    store,
    process: () => running,
    async restart(signal: NodeJS.Signals = 'SIGKILL') {
      await stopProcess(running, signal);
      running = await start();
    },
    async stop() {
      await stopProcess(running);
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
