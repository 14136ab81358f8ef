import { mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';
import { isSafeId } from './safe-id';

/**
 * One machine's directory, `<stateDir>/<vm_id>/`, and the record in it (`machine.json`) from
 * which a restarted worker finds the machine again. Each driver's layout adds its own paths.
 * The record is written atomically (temp file, fsync, rename, directory fsync): a crash leaves the
 * old record or the new one, never half of one for list() or status() to trip over.
 */
export class MachineDirectory<R> {
  readonly dir: string;
  private readonly recordFile: string;

  constructor(
    stateDir: string,
    readonly vmId: string,
  ) {
    if (!isSafeId(vmId)) throw new Error(`invalid vm id ${JSON.stringify(vmId)}`);
    this.dir = join(stateDir, vmId);
    this.recordFile = join(this.dir, 'machine.json');
  }

  /** Every directory in `stateDir` named like a machine (what list() and the reconcile walk). */
  static async vmIdsIn(stateDir: string): Promise<string[]> {
    const entries = await readdir(stateDir, { withFileTypes: true }).catch(() => []);
    return entries.filter((entry) => entry.isDirectory() && isSafeId(entry.name)).map((entry) => entry.name);
  }

  /** Creates the directory, failing if the machine exists: creation is never a silent overwrite. */
  async claim(): Promise<void> {
    await mkdir(dirname(this.dir), { recursive: true });
    try {
      await mkdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`machine ${this.vmId} already exists on this host`);
      throw error;
    }
  }

  readRecord(): Promise<R | null> {
    return readJsonFile<R>(this.recordFile);
  }

  /** `durable: false`: no fsync, for a record whose previous version is as good after a crash. */
  async writeRecord(record: R, options: { durable?: boolean } = {}): Promise<void> {
    await writeJsonAtomic(this.recordFile, record, options);
  }
}
