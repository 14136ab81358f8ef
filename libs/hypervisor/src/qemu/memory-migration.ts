import { spawn, type StdioOptions } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { isAlive, type ProcessIdentity } from '../host/process-identity';
import { sleep } from '../host/sleep';
import { handToQemu } from './qemu-confinement';
import type { QmpClient } from './qmp-client';

/** The default (128 MiB/s) makes a memory snapshot pause the source ~0.8 s; unlimited ~180 ms. */
const MIGRATION_BANDWIDTH = 64 * 1024 * 1024 * 1024;

/** A unix socket as this process names it, and as QEMU (chrooted in its machine directory) does. */
export interface QemuSocket {
  host: string;
  inside: string;
}

/** Lifts QEMU's migration speed limit; done before the source is paused, so not in its pause. */
export async function allowFastMigration(qmp: QmpClient): Promise<void> {
  await qmp.execute('migrate-set-parameters', { 'max-bandwidth': MIGRATION_BANDWIDTH });
}

/**
 * Writes the machine's memory and device state to `file` and waits until it is complete. QEMU may
 * not start processes (-sandbox spawn=deny, so no `exec:cat`) and, once it runs as its own user,
 * cannot open the snapshot directory: it streams into `socket`, which this process listens on and
 * hands, unread (pauseOnConnect), to the kit helper's `memory-sink` (`helper`, arbor-guest.c),
 * which copies it into the file at the disk's speed. Afterwards QEMU is in `postmigrate`: its
 * disks are inactive until `cont`.
 */
export async function saveMemory(qmp: QmpClient, file: string, socket: QemuSocket, helper: string): Promise<void> {
  await rm(socket.host, { force: true });
  const server = createServer({ pauseOnConnect: true });
  const written = new Promise<void>((resolve, reject) => {
    server.once('connection', (stream) => {
      runHelper(helper, ['memory-sink', file], [stream, 'ignore', 'pipe'])
        .finally(() => stream.destroy())
        .then(resolve, reject);
    });
  });
  written.catch(() => undefined); // awaited only once QEMU reports the migration complete
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket.host, () => resolve());
  });
  try {
    await handToQemu(socket.host);
    await qmp.execute('migrate', { uri: `unix:${socket.inside}` });
    for (;;) {
      const { status, 'error-desc': errorDesc } = await qmp.execute<{ status?: string; 'error-desc'?: string }>('query-migrate');
      if (status === 'completed') break;
      if (status === 'failed' || status === 'cancelled') throw new Error(`memory snapshot failed: ${errorDesc ?? status}`);
      await sleep(10);
    }
    await written;
  } finally {
    server.close();
    await rm(socket.host, { force: true });
  }
}

/**
 * Loads memory saved by saveMemory into a QEMU started with `-incoming defer`: QEMU listens on
 * `socket`, the kit helper's `memory-source` sends the file (sendfile) over this process's
 * connection. Waits until it is loaded (the machine stays paused until `cont`).
 */
export async function loadMemory(qmp: QmpClient, file: string, socket: QemuSocket, qemu: ProcessIdentity, helper: string): Promise<void> {
  await rm(socket.host, { force: true });
  await qmp.execute('migrate-incoming', { uri: `unix:${socket.inside}` });
  const stream = await new Promise<Socket>((resolve, reject) => {
    const connection = connect(socket.host);
    connection.once('connect', () => resolve(connection));
    connection.once('error', reject);
  });
  // QEMU may close its end once it has read the end of the stream: only the load's outcome counts.
  const sent = runHelper(helper, ['memory-source', file], ['ignore', stream, 'pipe']).catch((error: Error) => error);
  try {
    for (;;) {
      const { status } = await qmp.execute<{ status: string }>('query-status');
      if (status !== 'inmigrate') break;
      if (!(await isAlive(qemu))) throw new Error(`QEMU exited while restoring the memory snapshot (${String(await sent)})`);
      await sleep(10);
    }
  } finally {
    stream.destroy();
    await rm(socket.host, { force: true });
  }
}

/**
 * Runs the kit helper with `stdio`; fails with what it said on stderr unless it exits 0. Waits for
 * its exit, not for the socket it was handed to close (that is QEMU's to close, or the caller's).
 */
function runHelper(helper: string, args: string[], stdio: StdioOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(helper, args, { stdio });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const stderrRead = new Promise((done) => (child.stderr ? child.stderr.once('close', done) : done(undefined)));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      void stderrRead.then(() => (code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code ?? signal}: ${stderr.trim()}`))));
    });
  });
}
