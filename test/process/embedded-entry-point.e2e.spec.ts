import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '@arbor/application';
import { apiClient } from '../support/api-client';
import { distEntry, freePort, type RunningProcess, startProcess, stopProcess, waitForOutput } from '../support/processes';

const ROOT = projectRoot(__dirname);
/** An API key as issued: `<uuid><64 hex>`. */
const API_KEY = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[0-9a-f]{64}\b/g;

/**
 * What `npm start` runs — the built embedded entry point — started as a user starts it, on a fresh
 * data directory and a free port: the first start keeps the admin key in a private file and
 * prints that file's path, never the key (the output ends up in logs); the version endpoint names
 * this build, and a second start prints neither.
 */
describe('the embedded entry point (dist/apps/embedded/src/main.js) as a process', () => {
  const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
  let dir: string;
  let running: RunningProcess | null = null;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'arbor-embedded-'));
  });
  afterAll(async () => {
    if (running) await stopProcess(running);
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async () => {
    const port = await freePort();
    running = startProcess(distEntry('embedded'), { ARBOR_DATA_DIR: dir, PORT: String(port), HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir });
    await waitForOutput(running, /arbor: listening on/, 300_000);
    return { process: running, url: `http://127.0.0.1:${port}` };
  };
  const stop = async () => {
    await stopProcess(running!);
    running = null;
  };

  it("prints the admin key's file on the first start only, never the key, keeps it 0600, and names its build", async () => {
    const first = await start();
    const keyFile = join(dir, 'admin-api-key');
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(key).toMatch(API_KEY);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(first.process.output()).not.toMatch(API_KEY);
    expect(first.process.output()).not.toContain(key.slice(36)); // not even its secret half
    expect(first.process.output()).toContain(`arbor: created the first org and its admin API key, in ${keyFile} (mode 0600`);
    expect(first.process.output()).toContain(`KEY=$(cat ${keyFile})`);
    // The data directory was checked and its free space logged; the stores' files are the owner's alone.
    expect(first.process.output()).toContain(`data directory: ${dir}, mode 0700, owner uid ${process.getuid!()}`);
    expect(first.process.output()).toMatch(/data directory: \d+ MiB free/);
    for (const file of ['events.db', 'read-models.db']) expect({ file, mode: statSync(join(dir, file)).mode & 0o777 }).toEqual({ file, mode: 0o600 });

    const call = apiClient(first.url, key);
    const version = await call('GET', '/api/v1/system/version');
    expect(version.status).toBe(200);
    expect(version.json).toEqual({
      executable_name: 'orchestrator',
      workspace_version: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
      // From dist/build-info.json, written by `npm run build` (rebuild if HEAD moved since).
      git_hash: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim(),
    });
    const vms = await call('GET', '/api/v1/vms');
    expect({ status: vms.status, json: vms.json }).toEqual({ status: 200, json: [] });
    const wrongKey = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
    expect((await apiClient(first.url, wrongKey)('GET', '/api/v1/vms')).status).toBe(401);
    await stop();

    const second = await start();
    expect(second.process.output()).not.toMatch(API_KEY);
    expect(second.process.output()).not.toContain('admin API key');
    expect((await apiClient(second.url, key)('GET', '/api/v1/vms')).status).toBe(200);
    await stop();
  }, 320_000);

  it('refuses to start on a data directory others may write, saying what to do', async () => {
    const unsafe = mkdtempSync(join(tmpdir(), 'arbor-unsafe-'));
    try {
      chmodSync(unsafe, 0o777);
      const refused = startProcess(distEntry('embedded'), { ARBOR_DATA_DIR: unsafe, PORT: String(await freePort()), HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir });
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toContain(
        `arbor embedded: failed: the data directory ${unsafe} is writable by its group and others (mode 0777); whoever may write there can replace the event log or the keys: chmod 0700 ${unsafe}`,
      );
    } finally {
      rmSync(unsafe, { recursive: true, force: true });
    }
  }, 60_000);
});
