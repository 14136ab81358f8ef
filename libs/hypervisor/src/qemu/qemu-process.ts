import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { identify, type ProcessIdentity } from '../host/process-identity';
import { sleep } from '../host/sleep';

export interface QemuProcess {
  child: ChildProcess;
  identity: ProcessIdentity;
  exited: Promise<void>;
}

/**
 * Starts QEMU as a direct child (no -daemonize: this host's PID 1 reaps orphans late, and Node
 * reaps its own children at once). It gets its own session, so a terminal's Ctrl-C aimed at the
 * worker leaves machines running for the next worker to re-attach. Relative paths in `args` are
 * taken from `cwd`. Resolves once the QMP socket takes connections; fails with QEMU's own message when it
 * exits first.
 */
export async function launchQemu(args: string[], logFile: string, qmpSocket: string, cwd?: string): Promise<QemuProcess> {
  const log = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', log, log], detached: true, cwd });
  } finally {
    closeSync(log);
  }
  let exitedEarly = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => ((exitedEarly = true), resolve()));
    child.once('error', () => ((exitedEarly = true), resolve()));
  });
  // The socket file appears at bind(), a moment before QEMU listens: a connect in between is refused.
  while (!existsSync(qmpSocket) || !(await accepts(qmpSocket))) {
    if (exitedEarly) {
      const message = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n');
      throw new Error(`qemu-system-x86_64 exited at start: ${message}`);
    }
    await sleep(10);
  }
  const identity = child.pid !== undefined ? await identify(child.pid) : null;
  if (!identity) throw new Error('qemu-system-x86_64 exited at start');
  return { child, identity, exited };
}

/** Whether a Unix socket takes a connection now (closed at once: QEMU's monitor then waits for the next client). */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
