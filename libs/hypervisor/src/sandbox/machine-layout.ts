import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineSpec } from '../hypervisor-driver.port';
import type { ProcessIdentity } from './process-identity';
import type { LayerChain } from './snapshot-store';

/** What the driver remembers about a machine on disk, so a restarted worker finds it again. */
export interface MachineRecord {
  spec: MachineSpec;
  /** The snapshot the machine was started from (null: created from the base image). */
  source_snapshot_id: string | null;
  /** The read-only layers under the machine's own identity layer and upper dir. */
  chain: LayerChain;
  /** Absent while the machine is being set up (it already holds its snapshot layers then). */
  init?: ProcessIdentity;
}

/** VM and snapshot ids become directory and cgroup names: allow nothing that could escape them. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isSafeVmId(vmId: string): boolean {
  return SAFE_ID.test(vmId);
}

export function isSafeSnapshotId(snapshotId: string): boolean {
  return SAFE_ID.test(snapshotId) && !snapshotId.endsWith('.partial');
}

/**
 * Paths of one machine under `<stateDir>/<vm_id>/`. The machine's writable layer (upper + work)
 * lives on its own loop-mounted disk image, so the disk has a real size that `df` shows and that
 * can grow; the identity layer is a small read-only layer written before boot.
 */
export class MachineLayout {
  readonly dir: string;
  readonly diskImage: string;
  readonly disk: string;
  readonly upper: string;
  readonly work: string;
  readonly identity: string;
  readonly merged: string;
  readonly initLog: string;
  private readonly recordFile: string;

  constructor(
    stateDir: string,
    readonly vmId: string,
  ) {
    if (!isSafeVmId(vmId)) throw new Error(`invalid vm id ${JSON.stringify(vmId)}`);
    this.dir = join(stateDir, vmId);
    this.diskImage = join(this.dir, 'disk.img');
    this.disk = join(this.dir, 'disk');
    this.upper = join(this.disk, 'upper');
    this.work = join(this.disk, 'work');
    this.identity = join(this.dir, 'identity');
    this.merged = join(this.dir, 'merged');
    this.initLog = join(this.dir, 'init.log');
    this.recordFile = join(this.dir, 'machine.json');
  }

  async readRecord(): Promise<MachineRecord | null> {
    const text = await readFile(this.recordFile, 'utf8').catch(() => null);
    return text === null ? null : (JSON.parse(text) as MachineRecord);
  }

  async writeRecord(record: MachineRecord): Promise<void> {
    // Write-then-rename: a crash never leaves half a record for list()/status() to trip over.
    await writeFile(`${this.recordFile}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    await rename(`${this.recordFile}.tmp`, this.recordFile);
  }
}
