import { join } from 'node:path';
import type { MachineSpec } from '../hypervisor-driver.port';
import { MachineDirectory } from '../host/machine-directory';
import type { ProcessIdentity } from '../host/process-identity';
import { isSafeId } from '../host/safe-id';
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

/** A snapshot id names its directory; `<id>.partial` is the scratch directory of one being made. */
export function isSafeSnapshotId(snapshotId: string): boolean {
  return isSafeId(snapshotId) && !snapshotId.endsWith('.partial');
}

/**
 * Paths of one machine under `<stateDir>/<vm_id>/`. The machine's writable layer (upper + work)
 * lives on its own loop-mounted disk image, so the disk has a real size that `df` shows and that
 * can grow; the identity layer is a small read-only layer written before boot.
 */
export class MachineLayout extends MachineDirectory<MachineRecord> {
  readonly diskImage: string;
  readonly disk: string;
  readonly upper: string;
  readonly work: string;
  readonly identity: string;
  readonly merged: string;
  readonly initLog: string;

  constructor(stateDir: string, vmId: string) {
    super(stateDir, vmId);
    this.diskImage = join(this.dir, 'disk.img');
    this.disk = join(this.dir, 'disk');
    this.upper = join(this.disk, 'upper');
    this.work = join(this.disk, 'work');
    this.identity = join(this.dir, 'identity');
    this.merged = join(this.dir, 'merged');
    this.initLog = join(this.dir, 'init.log');
  }
}
