import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
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
 * Writes the machine's memory and device state to `file` and waits until it is complete and on
 * disk. QEMU may not start processes (-sandbox spawn=deny, so no `exec:cat`) and, once it runs as
 * its own user, cannot open the snapshot directory: it streams into `socket`, which this process
 * listens on and copies into the file. Afterwards QEMU is in `postmigrate`: its disks are inactive
 * until `cont`.
 */
export async function saveMemory(qmp: QmpClient, file: string, socket: QemuSocket): Promise<void> {
  await rm(socket.host, { force: true });
  const server = createServer();
  const written = new Promise<void>((resolve, reject) => {
    server.once('connection', (stream) => pipeline(stream, createWriteStream(file, { mode: 0o600 })).then(resolve, reject));
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
 * `socket`, this process sends the file. Waits until it is loaded (the machine stays paused until
 * `cont`).
 */
export async function loadMemory(qmp: QmpClient, file: string, socket: QemuSocket, qemu: ProcessIdentity): Promise<void> {
  await rm(socket.host, { force: true });
  await qmp.execute('migrate-incoming', { uri: `unix:${socket.inside}` });
  const stream = await new Promise<Socket>((resolve, reject) => {
    const connection = connect(socket.host);
    connection.once('connect', () => resolve(connection));
    connection.once('error', reject);
  });
  // QEMU may close its end once it has read the end of the stream: only the load's outcome counts.
  const sent = pipeline(createReadStream(file), stream).catch((error: Error) => error);
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
