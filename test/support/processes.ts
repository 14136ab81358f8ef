import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../../libs/application/src/project-root';

const ROOT = projectRoot(__dirname);

/** Compiled entry points, so tests run the same files `npm run start:*` runs. */
export function distEntry(app: 'api' | 'projector' | 'vm-worker' | 'embedded', file = 'main.js'): string {
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

/** Starts a built entry point with the test's environment, on the embedded stores unless `env` says otherwise. */
export function startProcess(entry: string, env: Record<string, string>): RunningProcess {
  const child = spawn(process.execPath, [entry], { cwd: ROOT, env: { ...process.env, ...EMBEDDED_STORES, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
