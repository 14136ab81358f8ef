import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MachineStateError,
  SnapshotNotFoundError,
  type CommitOptions,
  type DriverCapabilities,
  type DriverProbe,
  type ExecChunkHandler,
  type ExecResult,
  type ExecSpec,
  type HypervisorDriver,
  type MachineAddresses,
  type MachineInfo,
  type MachineSpec,
  type MachineState,
  type ReadFileOptions,
  type SnapshotInfo,
  type SnapshotMachineSpec,
  type WriteFileOptions,
} from '../hypervisor-driver.port';
import { killAndWait } from '../host/kill-process';
import { MachineDirectory } from '../host/machine-directory';
import { MachineLocks } from '../host/machine-locks';
import { Slots } from '../host/slots';
import { missingTools } from '../host/missing-tools';
import { ensurePrivateDirectory } from '../host/private-directory';
import { isSafeId } from '../host/safe-id';
import { HostNetwork, NETWORK_TOOLS } from '../network/host-network';
import type { NetworkLease } from '../network/network-leases';
import { DEFAULT_NETWORK_SETTINGS, type NetworkSettings } from '../network/network-settings';
import { SSH_ANSWER_TIMEOUT_MS, waitUntilSshAnswers } from '../network/ssh-readiness';
import type { GuestAgentClient } from './guest-agent-client';
import { runInGuestOrFail } from './guest-command';
import { execInGuest } from './guest-exec';
import { readGuestFile, writeGuestFile } from './guest-files';
import { ensureQemuBaseImage, readQemuBaseImage, type QemuBaseImage } from './image/qemu-base-image';
import { bootMachine, type GuestNetwork } from './machine-boot';
import { captureMachine, type CaptureContext } from './machine-capture';
import { MachineConnections, type LiveMachine } from './machine-connections';
import { restoreMachine } from './machine-restore';
import { AccelDecision } from './qemu-accel-probe';
import { DISK_DEVICE, type QemuAccel } from './qemu-command-line';
import { QEMU_USER } from './qemu-confinement';
import { QemuMachineLayout } from './qemu-machine-layout';
import { QemuSnapshotStore } from './qemu-snapshot-store';
import type { QmpClient } from './qmp-client';

export interface QemuDriverOptions {
  /** Per-machine state (disk overlays, sockets, records); machines are found here after a restart. */
  stateDir: string;
  /** Host-wide cache shared by data directories and test runs (the base image). */
  cacheDir: string;
  /** Immutable snapshots (disk layer + memory); children's disks point into it. */
  snapshotDir: string;
  /** The host bridge and addresses machines get (default: DEFAULT_NETWORK_SETTINGS). */
  network?: NetworkSettings;
  log?: (line: string) => void;
  accel?: 'auto' | 'kvm' | 'tcg';
}


/**
 * Real virtual machines: QEMU (KVM where a probe VM boots, else TCG) with QMP for lifecycle and
 * snapshots, the guest agent on virtio-serial for exec and files, qcow2 overlays for disks and
 * migration to a file for memory, and a virtio NIC on a tap of the host's bridge (network/) for
 * its own network. The work is done by the parts beside this file: machine-connections (QMP and
 * agent, re-attached after a restart), machine-boot, machine-capture (commit), machine-restore
 * (start from a snapshot).
 */
export class QemuDriver implements HypervisorDriver {
  readonly name = 'qemu';
  readonly capabilities: DriverCapabilities = { memory_snapshots: true };
  private readonly log: (line: string) => void;
  private readonly snapshots: QemuSnapshotStore;
  private readonly connections: MachineConnections;
  /** Lifecycle operations on one machine (pause, resume, commit, resize, destroy) run one at a time. */
  private readonly locks = new MachineLocks();
  private readonly starts = Slots.perCpu(2);
  private readonly accel: AccelDecision;
  private readonly capture: CaptureContext;
  private readonly network: HostNetwork;
  private probed: DriverProbe | null = null;

  constructor(private readonly options: QemuDriverOptions) {
    this.log = options.log ?? (() => undefined);
    this.snapshots = new QemuSnapshotStore(options.snapshotDir);
    this.connections = new MachineConnections(options.stateDir);
    this.accel = new AccelDecision({
      accel: options.accel,
      cacheDir: options.cacheDir,
      scratchRoot: join(options.stateDir, '.probe'),
      baseImage: () => this.baseImage(),
      log: this.log,
    });
    this.capture = { snapshots: this.snapshots, baseImage: () => this.baseImage(), log: this.log };
    this.network = new HostNetwork(options.network ?? DEFAULT_NETWORK_SETTINGS, options.stateDir, this.log);
  }

  /**
   * Usable when QEMU is installed and a base image is cached or can be built. Recommended (what
   * HYPERVISOR=auto prefers) only with KVM: the host alone rules KVM out cheaply where it can
   * (kvmUnavailableReason); only where KVM might work is the image built, if need be, and a probe
   * VM booted, since only a boot tells.
   */
  async probe(): Promise<DriverProbe> {
    if (this.probed) return this.probed;
    const missing = await missingTools(['qemu-system-x86_64', 'qemu-img', ...NETWORK_TOOLS]);
    if (missing.length > 0) return { ok: false, reason: `${missing.join(', ')} not installed (apt qemu-system-x86 qemu-utils iproute2 nftables)` };
    const image = await readQemuBaseImage(this.options.cacheDir);
    if (!image) {
      const builders = await missingTools(['debootstrap', 'apt-get', 'dpkg-deb', 'mkfs.ext4', 'cpio', 'gzip']);
      if (!existsSync('/bin/busybox')) builders.push('busybox (apt busybox-static)');
      if (builders.length > 0) return { ok: false, reason: `no base image cached and cannot build one: missing ${builders.join(', ')}` };
    }
    try {
      const choice = await this.accel.get(image);
      // Without KVM every boot is seconds of emulated CPU: usable, but not auto's first choice.
      this.probed = { ok: true, reason: choice.reason, recommended: choice.accel === 'kvm' };
    } catch (error) {
      this.probed = { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
    return this.probed;
  }

  async prepare(): Promise<void> {
    await this.accel.get(await this.baseImage());
    await this.network.ensureReady();
  }

  async addresses(vm_id: string): Promise<MachineAddresses | null> {
    const lease = await this.network.leaseOf(vm_id);
    return lease && addressesOf(lease);
  }

  async sweep(): Promise<void> {
    await this.network.sweep();
  }

  /**
   * Drops this process's QMP and agent connections, leaving the machines running: QEMU serves one
   * client per socket, so a worker that hands over (or a test that simulates a restart) lets go.
   */
  async close(): Promise<void> {
    this.connections.closeAll();
  }

  async create(spec: MachineSpec): Promise<MachineInfo> {
    if (spec.image_name !== 'default') throw new Error(`qemu has no image "${spec.image_name}" (only "default")`);
    const image = await this.baseImage();
    const { accel } = await this.accel.get(image);
    const layout = await this.claimMachine(spec.vm_id);
    return this.destroyedOnFailure(spec.vm_id, async () => {
      const lease = await this.network.attach(spec.vm_id, spec.network_group, 'tap');
      const record = await bootMachine(this.connections, layout, image, spec, accel, this.guestNetwork(lease));
      await waitUntilSshAnswers(lease.ipv6, SSH_ANSWER_TIMEOUT_MS);
      this.log(`qemu: machine ${spec.vm_id} running (pid ${record.process.pid}, ${accel}, ${lease.ipv6}, ${lease.ipv4})`);
      return { vm_id: spec.vm_id, state: 'running', pid: record.process.pid, addresses: addressesOf(lease) };
    });
  }

  async startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec): Promise<MachineInfo> {
    const snapshot = await this.snapshots.read(snapshot_id);
    if (!snapshot) throw new SnapshotNotFoundError(snapshot_id);
    const image = await this.baseImage();
    const layout = await this.claimMachine(spec.vm_id);
    return this.destroyedOnFailure(spec.vm_id, async () => {
      // A snapshot of a machine without a NIC restores only into a machine without one. The port
      // is made while the disk is (both before QEMU starts).
      const attached = snapshot.nic ? this.network.attach(spec.vm_id, spec.network_group, 'tap') : Promise.resolve(null);
      attached.catch(() => undefined); // awaited below; a failure there is the restore's
      const networkReady = attached.then((lease) => lease && this.guestNetwork(lease));
      networkReady.catch(() => undefined);
      const record = await restoreMachine(this.connections, this.snapshots, layout, image, snapshot, spec, networkReady).catch(async (error) => {
        await attached.catch(() => undefined); // settled before the clean-up's detach, which must come after it
        throw error;
      });
      const lease = await attached;
      if (lease) await waitUntilSshAnswers(lease.ipv6, SSH_ANSWER_TIMEOUT_MS);
      this.log(`qemu: machine ${spec.vm_id} restored from ${snapshot_id} (pid ${record.process.pid}${lease ? `, ${lease.ipv6}, ${lease.ipv4}` : ', no NIC'})`);
      return { vm_id: spec.vm_id, state: 'running', pid: record.process.pid, addresses: lease && addressesOf(lease) };
    });
  }

  async destroy(vm_id: string): Promise<void> {
    if (!isSafeId(vm_id)) return; // no such machine can exist
    const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
    // Destroy preempts: QEMU is stopped before the machine's lock is taken, so an operation stuck
    // on the machine (e.g. waiting on a guest agent that no longer answers) fails at once, its
    // sockets closed, instead of holding the lock, and this destroy, forever.
    const running = await layout.readRecord();
    if (running) await killAndWait(running.process, this.connections.exitOf(vm_id));
    await this.locks.run(vm_id, async () => {
      const record = await layout.readRecord();
      const exited = this.connections.exitOf(vm_id);
      this.connections.forget(vm_id);
      if (record) await killAndWait(record.process, exited);
      // Before the machine's directory goes: a lease whose directory is gone is a sweep's to take.
      await this.network.detach(vm_id);
      await rm(layout.dir, { recursive: true, force: true });
    });
  }

  /** Under the machine's lock, so a pause never lands inside a commit (whose end would undo it). */
  async pause(vm_id: string): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { qmp, state } = await this.connections.requireLive(vm_id);
      if (state === 'running') await qmp.execute('stop');
    });
  }

  /**
   * `cont` (which also takes back the disks of a machine a commit left captured), then what was
   * put off while it was paused: thawing file systems a keep_paused commit left frozen, and
   * growing the disk to a size asked for meanwhile.
   */
  async resume(vm_id: string): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { qmp, agent, record, layout, state } = await this.connections.requireLive(vm_id);
      if (state === 'running') return;
      await qmp.execute('cont');
      if (record.captured?.frozen) await agent.request('guest-fsfreeze-thaw');
      const grown = record.pending_fs_size_mib;
      if (grown !== undefined) await growDisk(qmp, agent, grown);
      await layout.writeRecord({ ...record, fs_size_mib: grown ?? record.fs_size_mib, captured: undefined, pending_fs_size_mib: undefined });
    });
  }

  status(vm_id: string): Promise<MachineState | null> {
    return this.connections.status(vm_id);
  }

  async list(): Promise<MachineInfo[]> {
    const machines: MachineInfo[] = [];
    for (const vm_id of await MachineDirectory.vmIdsIn(this.options.stateDir)) {
      const state = await this.status(vm_id).catch(() => 'dead' as const);
      if (state === null) continue;
      const record = await new QemuMachineLayout(this.options.stateDir, vm_id).readRecord();
      machines.push({ vm_id, state, pid: record?.process.pid });
    }
    return machines;
  }

  async exec(vm_id: string, spec: ExecSpec, onChunk: ExecChunkHandler): Promise<ExecResult> {
    const { agent } = await this.requireRunning(vm_id);
    return execInGuest(agent, spec, onChunk);
  }

  async readFile(vm_id: string, path: string, options: ReadFileOptions = {}): Promise<Buffer> {
    const { agent } = await this.requireRunning(vm_id);
    return readGuestFile(agent, path, options.max_bytes);
  }

  async writeFile(vm_id: string, path: string, content: Buffer, options?: WriteFileOptions): Promise<void> {
    const { agent } = await this.requireRunning(vm_id);
    await writeGuestFile(agent, path, content, options);
  }

  /** Memory + disk at one instant (machine-capture.ts), under the machine's lock. */
  async commit(vm_id: string, snapshot_id: string, options: CommitOptions = {}): Promise<SnapshotInfo> {
    if (!isSafeId(snapshot_id)) throw new Error(`invalid snapshot id ${JSON.stringify(snapshot_id)}`);
    // Root's alone: QEMU streams memory through a socket and never opens snapshots by path.
    await ensurePrivateDirectory(this.options.snapshotDir);
    return this.locks.run(vm_id, async () => captureMachine(this.capture, await this.connections.requireLive(vm_id), snapshot_id, options));
  }

  /**
   * A running machine grows at once (QMP block_resize, then resize2fs in the guest). A paused one
   * stays paused: its new size is kept and applied at resume, because resize2fs needs the guest
   * running and, after a commit, QEMU must not touch the disk before `cont` takes it back.
   */
  async resizeDisk(vm_id: string, fs_size_mib: number): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { qmp, agent, record, layout, state } = await this.connections.requireLive(vm_id);
      const current = record.pending_fs_size_mib ?? record.fs_size_mib;
      if (!Number.isInteger(fs_size_mib) || fs_size_mib <= current) {
        throw new Error(`disk of ${vm_id} is ${current} MiB; it can only grow (asked ${fs_size_mib} MiB)`);
      }
      if (state !== 'running') {
        await layout.writeRecord({ ...record, pending_fs_size_mib: fs_size_mib });
        return;
      }
      await growDisk(qmp, agent, fs_size_mib);
      await layout.writeRecord({ ...record, fs_size_mib });
    });
  }

  async getSnapshot(snapshot_id: string): Promise<SnapshotInfo | null> {
    return (await this.snapshots.read(snapshot_id))?.info ?? null;
  }

  async listSnapshots(): Promise<SnapshotInfo[]> {
    return (await this.snapshots.list()).map((record) => record.info);
  }

  /** Refuses while a machine's disk runs on the snapshot's layer (see QemuSnapshotStore.delete). */
  async deleteSnapshot(snapshot_id: string): Promise<void> {
    const machineDisks = new Map<string, string>();
    for (const vm_id of await MachineDirectory.vmIdsIn(this.options.stateDir)) {
      const record = await new QemuMachineLayout(this.options.stateDir, vm_id).readRecord();
      if (record) machineDisks.set(vm_id, record.disk);
    }
    await this.snapshots.delete(snapshot_id, machineDisks);
  }

  /**
   * Creates the machine's directory (failing if it exists). It and the state directory are 0700
   * and QEMU's user's: after -runas, QEMU opens new disk layers and the migration socket there.
   */
  private async claimMachine(vm_id: string): Promise<QemuMachineLayout> {
    await ensurePrivateDirectory(this.options.stateDir, QEMU_USER);
    const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
    await layout.claim();
    await ensurePrivateDirectory(layout.dir, QEMU_USER);
    return layout;
  }

  private baseImage(): Promise<QemuBaseImage> {
    return ensureQemuBaseImage(this.options.cacheDir, this.log);
  }

  private guestNetwork(lease: NetworkLease): GuestNetwork {
    return { nic: { ifname: lease.ifname, mac: lease.mac }, batch: this.network.guestInterfaceBatch(lease) };
  }

  /** Runs the start of a claimed machine; if it fails, everything of the machine goes again. */
  /**
   * Starts a machine (at most `starts` at once: a guest booting or resuming under emulation costs
   * seconds of CPU, and a burst of them would all crawl); destroys it if that fails.
   */
  private async destroyedOnFailure<T>(vm_id: string, start: () => Promise<T>): Promise<T> {
    try {
      return await this.starts.run(start);
    } catch (error) {
      await this.destroy(vm_id).catch(() => undefined);
      throw error;
    }
  }

  private async requireRunning(vm_id: string): Promise<LiveMachine> {
    // A commit or resize in progress pauses the machine briefly: wait for it rather than refuse.
    await this.locks.idle(vm_id);
    const live = await this.connections.requireLive(vm_id);
    if (live.state !== 'running') throw new MachineStateError(vm_id, `machine ${vm_id} is ${live.state}`);
    return live;
  }
}

/** Grows the disk under a running guest: the block device first, then its file system. */
async function growDisk(qmp: QmpClient, agent: GuestAgentClient, fs_size_mib: number): Promise<void> {
  await qmp.execute('block_resize', { device: DISK_DEVICE, size: fs_size_mib * 1024 * 1024 });
  await runInGuestOrFail(agent, ['resize2fs', '/dev/vda']);
}

function addressesOf(lease: NetworkLease): MachineAddresses {
  return { ipv6: lease.ipv6, ipv4: lease.ipv4, mac: lease.mac };
}

export type { QemuAccel };
