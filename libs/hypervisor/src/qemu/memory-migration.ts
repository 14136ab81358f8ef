import { isAlive, type ProcessIdentity } from '../host/process-identity';
import { sleep } from '../host/sleep';
import type { QmpClient } from './qmp-client';

/** The default (128 MiB/s) makes a memory snapshot pause the source ~0.8 s; unlimited ~180 ms. */
const MIGRATION_BANDWIDTH = 64 * 1024 * 1024 * 1024;

/** Lifts QEMU's migration speed limit; done before the source is paused, so not in its pause. */
export async function allowFastMigration(qmp: QmpClient): Promise<void> {
  await qmp.execute('migrate-set-parameters', { 'max-bandwidth': MIGRATION_BANDWIDTH });
}

/**
 * Writes the machine's memory and device state to `file` (migration into `cat`) and waits until
 * it is complete. Afterwards QEMU is in `postmigrate`: its disks are inactive until `cont`.
 */
export async function saveMemory(qmp: QmpClient, file: string): Promise<void> {
  await qmp.execute('migrate', { uri: `exec:cat > ${shellQuote(file)}` });
  for (;;) {
    const { status, 'error-desc': errorDesc } = await qmp.execute<{ status?: string; 'error-desc'?: string }>('query-migrate');
    if (status === 'completed') return;
    if (status === 'failed' || status === 'cancelled') throw new Error(`memory snapshot failed: ${errorDesc ?? status}`);
    await sleep(10);
  }
}

/**
 * Loads memory saved by saveMemory into a QEMU started with `-incoming defer`, and waits until it
 * is loaded (the machine stays paused until `cont`).
 */
export async function loadMemory(qmp: QmpClient, file: string, qemu: ProcessIdentity): Promise<void> {
  await qmp.execute('migrate-incoming', { uri: `exec:cat ${shellQuote(file)}` });
  for (;;) {
    const { status } = await qmp.execute<{ status: string }>('query-status');
    if (status !== 'inmigrate') return;
    if (!(await isAlive(qemu))) throw new Error('QEMU exited while restoring the memory snapshot');
    await sleep(10);
  }
}

/** `path` as one shell word (QEMU runs exec: URIs through /bin/sh). */
function shellQuote(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}
