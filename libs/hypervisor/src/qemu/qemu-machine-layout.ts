import { join } from 'node:path';
import type { MachineIdentity } from '../hypervisor-driver.port';
import { MachineDirectory } from '../host/machine-directory';
import type { ProcessIdentity } from '../host/process-identity';
import type { MachineNic, QemuAccel } from './qemu-command-line';
import { nameInsideQemu } from './qemu-confinement';
import type { QemuSocket } from './memory-migration';

/** What the driver remembers about a machine, so a restarted worker finds and re-attaches it. */
export interface QemuMachineRecord {
  vm_id: string;
  vcpu_count: number;
  mem_size_mib: number;
  fs_size_mib: number;
  env: Record<string, string>;
  identity: MachineIdentity;
  accel: QemuAccel;
  /** Its NIC (absent: a machine from before machines had networks; a snapshot of it restores without one). */
  nic?: MachineNic | null;
  /** Its network group (see MachineSpec.network_group). */
  network_group?: string;
  /** The built image its disk chain ends in (absent or null: the default image). */
  image_id?: string | null;
  /**
   * The guest kit's disk it was started with (kept as it is for its life and its snapshots'; absent
   * or null: a machine from before the kit, restored from such a snapshot).
   */
  kit_disk?: string | null;
  process: ProcessIdentity;
  /** The qcow2 the machine writes to: the top of its chain. */
  disk: string;
  /** Number of the next top layer file (disk-<n>.qcow2). */
  next_layer: number;
  /** Snapshot layers between the top and the base image (decides when a commit flattens). */
  depth: number;
  /**
   * Set while the machine stays paused right after a commit captured it (QEMU's `postmigrate`:
   * its disks are handed over and only `cont` takes them back, so it is left alone until resume):
   * the snapshot holding exactly its state, and whether its file systems are still frozen.
   */
  captured?: { snapshot_id: string; frozen: boolean };
  /** A disk size asked for while paused: grown (block device, then resize2fs) at the next resume. */
  pending_fs_size_mib?: number;
}

/** Paths of one machine under `<stateDir>/<vm_id>/`. */
export class QemuMachineLayout extends MachineDirectory<QemuMachineRecord> {
  readonly qmpSocket: string;
  readonly agentSocket: string;

  readonly serialLog: string;
  readonly qemuLog: string;

  constructor(stateDir: string, vmId: string) {
    super(stateDir, vmId);
    this.qmpSocket = join(this.dir, 'qmp.sock');
    this.agentSocket = join(this.dir, 'agent.sock');

    this.serialLog = join(this.dir, 'serial.log');
    this.qemuLog = join(this.dir, 'qemu.log');
    // sockaddr_un holds 108 bytes: say so rather than let QEMU fail obscurely.
    if (Buffer.byteLength(this.agentSocket) > 107) throw new Error(`state directory too deep for unix sockets: ${this.agentSocket}`);
  }

  /** Where memory snapshots stream through (QEMU may not run `cat`: -sandbox spawn=deny). */
  migrationSocket(): QemuSocket {
    const host = join(this.dir, 'migrate.sock');
    return { host, inside: nameInsideQemu(this.dir, host) };
  }

  layerPath(layer: number): string {
    return join(this.dir, `disk-${layer}.qcow2`);
  }
}
