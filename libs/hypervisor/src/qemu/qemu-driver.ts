import { existsSync } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  ImageInUseError,
  ImageNotFoundError,
  MachineStateError,
  SnapshotNotFoundError,
  type CommitOptions,
  type DriverCapabilities,
  type DriverProbe,
  type ExecChunkHandler,
  type ExecResult,
  type ExecSpec,
  type HypervisorDriver,
  type ImageBuildProgress,
  type ImageBuildSpec,
  type ImageInfo,
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
import { runCommand } from '../host/run-command';
import { isSafeId } from '../host/safe-id';
import { imageSizeMib } from '../images/image-size';
import { ImageStore } from '../images/image-store';
import { checkRootTree } from '../images/root-tree';
import { ensureGuestKit } from '../kit/guest-kit';
import { KIT_PATHS } from '../kit/kit-paths';
import { HostNetwork, NETWORK_TOOLS } from '../network/host-network';
import type { NetworkLease } from '../network/network-leases';
import { DEFAULT_NETWORK_SETTINGS, type NetworkSettings } from '../network/network-settings';
import { SSH_ANSWER_TIMEOUT_MS, waitUntilAddressAnswers, waitUntilSshAnswers } from '../network/ssh-readiness';
import type { GuestAgentClient } from './guest-agent-client';
import { runInGuestOrFail } from './guest-command';
import { execInGuest } from './guest-exec';
import { readGuestFile, writeGuestFile } from './guest-files';
import { ensureQemuBaseImage, readQemuBaseImage, type QemuBaseImage } from './image/qemu-base-image';
import { bootMachine, type GuestNetwork } from './machine-boot';
import { captureMachine, type BaseDisk, type CaptureContext } from './machine-capture';
import { MachineConnections, type LiveMachine } from './machine-connections';
import { restoreMachine } from './machine-restore';
import { AccelDecision } from './qemu-accel-probe';
import { backingChain, createOverlay } from './qcow2-chain';
import { DISK_DEVICE, type QemuAccel } from './qemu-command-line';
import { handToQemu, QEMU_USER } from './qemu-confinement';
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
  /** Images built on this host (buildImage); default: `<snapshotDir>.images` beside the snapshots. */
  imageDir?: string;
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
  private readonly images: ImageStore;
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
    this.capture = { snapshots: this.snapshots, baseDisk: (record) => this.baseDisk(record.image_id ?? null), helper: () => this.hostHelper(), log: this.log };
    this.network = new HostNetwork(options.network ?? DEFAULT_NETWORK_SETTINGS, options.stateDir, this.log);
    this.images = new ImageStore(resolve(options.imageDir ?? `${options.snapshotDir}.images`));
  }

  /**
   * Usable when QEMU is installed and a base image is cached or can be built. Recommended (what
   * HYPERVISOR=auto prefers) only with KVM: the host alone rules KVM out cheaply where it can
   * (kvmUnavailableReason); only where KVM might work is the image built, if need be, and a probe
   * VM booted, since only a boot tells.
   */
  async probe(): Promise<DriverProbe> {
    if (this.probed) return this.probed;
    const missing = await missingTools(['qemu-system-x86_64', 'qemu-img', 'mkfs.ext4', ...NETWORK_TOOLS]);
    if (missing.length > 0) return { ok: false, reason: `${missing.join(', ')} not installed (apt qemu-system-x86 qemu-utils e2fsprogs iproute2 nftables)` };
    const image = await readQemuBaseImage(this.options.cacheDir);
    if (!image) {
      const builders = await missingTools(['debootstrap', 'apt-get', 'dpkg-deb', 'cpio', 'gzip', 'gcc', 'patchelf', 'chroot']);
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
    if (!spec.image_id && spec.image_name !== 'default') throw new Error(`qemu has no image "${spec.image_name}" (only "default" or a built image_id)`);
    const image = await this.baseImage();
    const { accel } = await this.accel.get(image);
    const { layout, fs_size_mib } = await this.claimOnImage(spec);
    return this.startOrDestroy(spec.vm_id, async () => {
      const lease = await this.network.attach(spec.vm_id, spec.network_group, 'tap');
      const record = await bootMachine(this.connections, layout, image, { ...spec, fs_size_mib }, accel, this.guestNetwork(lease));
      await waitUntilSshAnswers(lease.ipv6, SSH_ANSWER_TIMEOUT_MS);
      this.log(`qemu: machine ${spec.vm_id} running (pid ${record.process.pid}, ${accel}, ${lease.ipv6}, ${lease.ipv4})`);
      return { vm_id: spec.vm_id, state: 'running', pid: record.process.pid, addresses: addressesOf(lease) };
    });
  }

  async startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec): Promise<MachineInfo> {
    const snapshot = await this.snapshots.read(snapshot_id);
    if (!snapshot) throw new SnapshotNotFoundError(snapshot_id);
    // Its memory holds a machine without a NIC, and memory restores only into a machine of the
    // same shape: the machine would have no network at all, where every VM has an address the
    // edge routes to. Refused before anything is made, saying why.
    if (!snapshot.nic) throw new Error(SNAPSHOT_WITHOUT_NIC(snapshot_id));
    const image = await this.baseImage();
    const layout = await this.claimMachine(spec.vm_id);
    return this.startOrDestroy(spec.vm_id, async () => {
      // The port is made while the disk is (both before QEMU starts).
      const attached = this.network.attach(spec.vm_id, spec.network_group, 'tap');
      attached.catch(() => undefined); // awaited below; a failure there is the restore's
      const networkReady = attached.then((lease) => this.guestNetwork(lease));
      networkReady.catch(() => undefined);
      const helper = await this.hostHelper();
      const record = await restoreMachine(this.connections, this.snapshots, layout, image, snapshot, spec, networkReady, helper).catch(async (error) => {
        await attached.catch(() => undefined); // settled before the clean-up's detach, which must come after it
        throw error;
      });
      const lease = await attached;
      // Its sshd was captured listening and runs on (guest-identity.ts): its new address answering is enough.
      await waitUntilAddressAnswers(lease.ipv6, SSH_ANSWER_TIMEOUT_MS);
      this.log(`qemu: machine ${spec.vm_id} restored from ${snapshot_id} (pid ${record.process.pid}, ${lease.ipv6}, ${lease.ipv4})`);
      return { vm_id: spec.vm_id, state: 'running', pid: record.process.pid, addresses: addressesOf(lease) };
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
   * Claims the machine and makes its first disk layer on its image (the default one, or a built
   * one, then under the image store's lock, so a deleteImage sees the machine or the machine sees
   * no image). The disk is at least the image's size.
   */
  private async claimOnImage(spec: MachineSpec): Promise<{ layout: QemuMachineLayout; fs_size_mib: number }> {
    const claim = async (base: BaseDisk, sizeMib: number) => {
      const layout = await this.claimMachine(spec.vm_id);
      const fs_size_mib = Math.max(spec.fs_size_mib, sizeMib);
      await this.destroyedOnFailure(spec.vm_id, async () => {
        await createOverlay(layout.layerPath(0), base.path, fs_size_mib, base.format);
        await handToQemu(layout.layerPath(0));
      });
      return { layout, fs_size_mib };
    };
    const image_id = spec.image_id;
    if (!image_id) {
      const image = await this.baseImage();
      return claim({ path: image.disk, format: 'qcow2' }, image.disk_size_mib);
    }
    return this.images.withLock(async () => {
      const info = await this.images.read(image_id);
      if (!info) throw new ImageNotFoundError(image_id);
      return claim(await this.baseDisk(image_id), info.size_mib);
    });
  }

  /** The guest kit's static helper, which the host runs too (memory in and out of snapshots, image checks). */
  private async hostHelper(): Promise<string> {
    return (await ensureGuestKit(this.options.cacheDir, this.log)).helper;
  }

  /** The disk a machine's chain ends in: the default image's, or a built image's ext4. */
  private async baseDisk(image_id: string | null): Promise<BaseDisk> {
    if (!image_id) return { path: (await this.baseImage()).disk, format: 'qcow2' };
    return { path: this.images.path(image_id, IMAGE_DISK), format: 'raw' };
  }

  /**
   * An image is an ext4 file system made from the root filesystem as it is (mkfs.ext4 -d, which
   * copies symlinks as symlinks and device nodes as the guest's own), once the kit's helper has
   * checked it (images/root-tree.ts: no mount inside, no hard link out of it). Raw, read-only and
   * sparse, it is the bottom of its machines' qcow2 chains as the default image's disk is of
   * theirs; Arbor's kernel, initramfs and guest kit boot it. Nothing is written into the tree.
   */
  async buildImage(spec: ImageBuildSpec, onProgress?: ImageBuildProgress): Promise<ImageInfo> {
    await this.baseImage(); // the kernel and initramfs its machines boot with, and the kit
    const helper = await this.hostHelper();
    return this.images.build(spec.image_id, async (scratch) => {
      onProgress?.('configuring', 'checking the root filesystem');
      const { bytes, entries } = await checkRootTree(helper, spec.rootfs_dir);
      const size_mib = imageSizeMib(bytes, spec.extra_size_mib);
      onProgress?.('creating_disk', `an ext4 disk of ${size_mib} MiB`);
      const disk = join(scratch, IMAGE_DISK);
      // Inodes for every entry twice over, and never fewer than ext4's default ratio would give.
      const inodes = Math.max(entries * 2 + 8192, Math.ceil((size_mib * 1024) / 16));
      await runCommand('mkfs.ext4', ['-q', '-F', '-L', 'arbor-root', '-N', String(inodes), '-d', spec.rootfs_dir, disk, `${size_mib}M`]);
      await chmod(disk, 0o444);
      this.log(`qemu: image ${spec.image_id} built (${entries} entries, ${(bytes / 2 ** 20).toFixed(1)} MiB, disk ${size_mib} MiB)`);
      return size_mib;
    });
  }

  getImage(image_id: string): Promise<ImageInfo | null> {
    return this.images.read(image_id);
  }

  /** Refuses while a machine's or a snapshot's disk chain ends in the image's disk. */
  async deleteImage(image_id: string): Promise<void> {
    await this.images.withLock(async () => {
      if (!(await this.images.read(image_id))) return;
      const disk = this.images.path(image_id, IMAGE_DISK);
      const onImage = async (top: string) => existsSync(top) && (await backingChain(top).catch(() => [] as string[])).includes(disk);
      const users: string[] = [];
      for (const vm_id of await MachineDirectory.vmIdsIn(this.options.stateDir)) {
        const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
        const record = await layout.readRecord();
        if (await onImage(record?.disk ?? layout.layerPath(0))) users.push(vm_id);
      }
      for (const snapshot of await this.snapshots.list()) {
        if (await onImage(this.snapshots.diskPath(snapshot.info.snapshot_id))) users.push(snapshot.info.snapshot_id);
      }
      if (users.length > 0) throw new ImageInUseError(image_id, users);
      await this.images.remove(image_id);
    });
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

  /**
   * Starts a claimed machine (at most `starts` at once: a guest booting or resuming under emulation
   * costs seconds of CPU, and a burst of them would all crawl); destroys it if that fails.
   */
  private startOrDestroy<T>(vm_id: string, start: () => Promise<T>): Promise<T> {
    return this.destroyedOnFailure(vm_id, () => this.starts.run(start));
  }

  /** Runs work on a claimed machine; if it fails, everything of the machine goes again. */
  private async destroyedOnFailure<T>(vm_id: string, start: () => Promise<T>): Promise<T> {
    try {
      return await start();
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

/** Grows the disk under a running guest: the block device first, then its file system (the kit's resize2fs). */
async function growDisk(qmp: QmpClient, agent: GuestAgentClient, fs_size_mib: number): Promise<void> {
  await qmp.execute('block_resize', { device: DISK_DEVICE, size: fs_size_mib * 1024 * 1024 });
  await runInGuestOrFail(agent, [KIT_PATHS.resize2fs, '/dev/vda']);
}

/** A built image's disk in its directory of the image store. */
const IMAGE_DISK = 'root.ext4';

/** Why a snapshot of a machine from before machines had networks is not restored (see startFromSnapshot). */
export const SNAPSHOT_WITHOUT_NIC = (snapshot_id: string) =>
  `commit ${snapshot_id} was taken on qemu before VMs had networks: its saved machine has no network card, so a VM restored from it would have no address, SSH or edge route; start VMs from a commit taken since (or from new_root)`;

function addressesOf(lease: NetworkLease): MachineAddresses {
  return { ipv6: lease.ipv6, ipv4: lease.ipv4, mac: lease.mac };
}

export type { QemuAccel };
