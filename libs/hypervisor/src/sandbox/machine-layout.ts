import { join } from 'node:path';
import type { MachineSpec } from '../hypervisor-driver.port';
import { MachineDirectory } from '../host/machine-directory';
import type { ProcessIdentity } from '../host/process-identity';
import { isSafeId } from '../host/safe-id';
import type { OciRuntimeName } from './oci-runtime';
import type { LayerChain } from './snapshot-store';

/** What the driver remembers about a machine on disk, so a restarted worker finds it again. */
export interface MachineRecord {
  spec: MachineSpec;
  /** The snapshot the machine was started from (null: created from the base image). */
  source_snapshot_id: string | null;
  /** The read-only layers under the machine's own identity layer and upper dir. */
  chain: LayerChain;
  /** The container's init, absent while the machine is being set up (it already holds its snapshot layers then). */
  init?: ProcessIdentity;
  /**
   * The id the machine runs under (its container, its cgroups, its root's mount point), when
   * not its vm_id: a warm machine claimed by a VM keeps the id it was booted with (warm-pool.ts).
   */
  container?: string;
  /** The OCI runtime its container runs under, for life (absent: runc, as before crun could be chosen). */
  runtime?: OciRuntimeName;
}

/** The runtime a machine's container runs under. */
export function runtimeOf(record: MachineRecord | null): OciRuntimeName {
  return record?.runtime ?? 'runc';
}

/** The id a machine's container, cgroups and root mount go by. */
export function containerOf(record: MachineRecord | null, vmId: string): string {
  return record?.container ?? vmId;
}

/** A snapshot id names its directory; `<id>.partial` is the scratch directory of one being made. */
export function isSafeSnapshotId(snapshotId: string): boolean {
  return isSafeId(snapshotId) && !snapshotId.endsWith('.partial');
}

/**
 * Where machines' roots are mounted: the runtime mounts a machine's root from inside the machine's
 * user namespace, as guest root, an unprivileged host id that must be able to walk every directory
 * on the way to it. The state directory sits in the data directory, which an operator may well keep
 * 0700; this path's parents are the host's /run and a directory the driver keeps 0711 (walk, not
 * list). VM ids are unique on a host (they name its cgroups too), so one directory serves every
 * driver instance. Being in /run, it goes with a reboot, as the machines' processes do.
 */
export const MACHINE_ROOTS_DIR = '/run/arbor/sandbox-roots';

/**
 * Paths of one machine under `<stateDir>/<vm_id>/` (its root's mount point under MACHINE_ROOTS_DIR, by its container id). The machine's writable layer (upper + work)
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
  /** The machine's OCI config: the machine directory is its runtime bundle. */
  readonly config: string;

  /** `container`: the id the machine runs under, when not its vm_id (MachineRecord.container). */
  constructor(stateDir: string, vmId: string, readonly container = vmId) {
    super(stateDir, vmId);
    if (!isSafeId(container)) throw new Error(`invalid container id ${JSON.stringify(container)}`);
    this.diskImage = join(this.dir, 'disk.img');
    this.disk = join(this.dir, 'disk');
    this.upper = join(this.disk, 'upper');
    this.work = join(this.disk, 'work');
    this.identity = join(this.dir, 'identity');
    this.merged = join(MACHINE_ROOTS_DIR, container);
    this.initLog = join(this.dir, 'init.log');
    this.config = join(this.dir, 'config.json');
  }
}
