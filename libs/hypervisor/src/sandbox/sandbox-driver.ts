import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { writeJsonAtomic } from '@arbor/durable-files';
import {
  ImageInUseError,
  ImageNotFoundError,
  MachineNotFoundError,
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
import { allocatedBytes } from '../host/allocated-bytes';
import { unmountAllUnder } from '../host/host-mounts';
import { killAndWait } from '../host/kill-process';
import { MachineDirectory } from '../host/machine-directory';
import { MachineLocks } from '../host/machine-locks';
import { missingTools } from '../host/missing-tools';
import { ensurePrivateDirectory } from '../host/private-directory';
import { identify, isAlive, type ProcessIdentity } from '../host/process-identity';
import { runCommand } from '../host/run-command';
import { isSafeId } from '../host/safe-id';
import { Slots } from '../host/slots';
import { imageSizeMib } from '../images/image-size';
import { ImageStore } from '../images/image-store';
import { prepareSandboxLayer } from '../images/root-tree';
import { KIT_PATHS } from '../kit/kit-paths';
import { HostNetwork, NETWORK_TOOLS } from '../network/host-network';
import { NO_GROUP } from '../network/network-leases';
import { DEFAULT_NETWORK_SETTINGS, type NetworkSettings } from '../network/network-settings';
import { SSH_ANSWER_TIMEOUT_MS, waitUntilSshListens } from '../network/ssh-readiness';
import { baseRootfsPath, ensureBaseRootfs } from './base-rootfs';
import { FAVOR_DYNMODS, favorCgroupMoves } from './cgroup-favor-dynmods';
import { probeCgroups } from './cgroup-probe';
import { containerConfig, machineSeccomp } from './container-config';
import { execInContainer, type ContainerExecTarget } from './container-exec';
import { flattenLayers } from './flatten-layers';
import { readGuestFile, writeGuestFile } from './guest-files';
import { GUEST_IDS } from './guest-ids';
import { moveOrCopyTree } from './move-tree';
import { ensureKitLayer, kitLayerPath, type SandboxKit } from './kit-layer';
import { ensureKeyQuota } from './key-quota';
import { isMachineFrozen, removeLeftoverCgroups, thawMachine } from './machine-cgroup-dirs';
import { MachineFreezer } from './machine-freezer';
import { createMachineDisk, diskDeviceOf, growMachineDisk, releaseMachineDisk } from './machine-disk';
import { hostnameOf, writeIdentityLayer } from './machine-identity-files';
import { containerOf, isSafeSnapshotId, MachineLayout, runtimeOf, type MachineRecord } from './machine-layout';
import { MachineReaper } from './machine-reaper';
import { runtimeUnder, type OciRuntime, type OciRuntimeName } from './oci-runtime';
import { applyOciRuntimePlan, planOciRuntime, type OciRuntimeSetting } from './runtime-choice';
import { mountOverlayRoot } from './overlay-root';
import { SnapshotStore, type LayerChain, type StoredSnapshot } from './snapshot-store';
import { SeccompPrograms } from './seccomp-programs';
import { refreshSshEnvironment } from './sshd-environment';
import { WarmPool, type WarmPoolOptions } from './warm-pool';
import { DiskPool } from './disk-pool';

export interface SandboxDriverOptions {
  /** Per-machine state (disks, layers, records); machines are found here again after a restart. */
  stateDir: string;
  /** Snapshots (immutable layers + metadata); they outlive the machines they were taken from. */
  snapshotDir: string;
  /** Host-wide cache shared by data directories and test runs (the base root filesystem, the guest kit). */
  cacheDir: string;
  /** Images built on this host (buildImage); default: `<snapshotDir>.images` beside the snapshots. */
  imageDir?: string;
  /** The host bridge and addresses machines get (default: DEFAULT_NETWORK_SETTINGS). */
  network?: NetworkSettings;
  /** Machines of the default image booted ahead, that creates claim (warm-pool.ts); none by default. */
  warmPool?: WarmPoolOptions;
  /**
   * Disks formatted and mounted ahead, that machines booted cold (branch children, creates no warm
   * machine serves) take instead of making one (disk-pool.ts); none by default. Their size follows
   * the machines': it starts at the warm pool's shape.
   */
  spareDisks?: number;
  /** The OCI runtime new machines run under (runtime-choice.ts); default auto: crun where it runs, else runc. */
  runtime?: OciRuntimeSetting;
  log?: (line: string) => void;
}

/**
 * Snapshot layers a chain may stack before a commit flattens it into one. The lowerdir list goes
 * to mount(2) in a single 4 KiB page: 16 layers of ~100-byte paths, plus the identity layer, the
 * base, upper and work, stay well inside it even for long data directory paths (overlayfs itself
 * would take 500); and every lookup that misses walks all layers, so short chains stay fast.
 */
export const MAX_SNAPSHOT_LAYERS = 16;

const HOST_TOOLS = ['perl', 'losetup', 'findmnt', 'mkfs.btrfs', 'btrfs', 'cp', ...NETWORK_TOOLS];
/** What building the guest kit takes (once per host; kit/guest-kit.ts). */
const KIT_TOOLS = ['debootstrap', 'gcc', 'patchelf', 'chroot'];

/** The machine's PID 1: the guest kit's init, which keeps its sshd running and reaps orphans (kit/kit-files.ts). */
const INIT = [KIT_PATHS.init, 'sandbox'];


/**
 * Machines as containers of an OCI runtime, crun or runc (oci-runtime.ts, container-config.ts): a user
 * namespace whose root is an unprivileged host id (guest-ids.ts), their own PID, mount, IPC, UTS,
 * cgroup and network namespaces, a reduced capability set, Docker's seccomp profile, no_new_privs, a device
 * allow-list, masked and read-only kernel paths, and memory/cpu/pids limits and the freezer on
 * cgroups the runtime manages (v1 or v2, whichever the host runs). Their root is an overlayfs
 * copy-on-write root over the shared base. Each has a network of its own (network/): a namespace
 * whose eth0 is one end of a veth pair on the host's bridge, with the machine's addresses, and an
 * sshd the init keeps running.
 *
 * This is container isolation, not a VM boundary: machines share the host's kernel.
 *
 * Snapshots hold the filesystem only (capabilities.memory_snapshots is false): a machine started
 * from a snapshot (a branch child among them) boots fresh processes on a copy of the files.
 */
export class SandboxDriver implements HypervisorDriver {
  readonly name = 'sandbox';
  readonly capabilities: DriverCapabilities = { memory_snapshots: false };
  private readonly log: (line: string) => void;
  private readonly stateDir: string;
  private readonly snapshots: SnapshotStore;
  private readonly locks = new MachineLocks();
  /** Both runtimes' views; each machine is run by the one its record names, for life. */
  private readonly runtimes: Record<OciRuntimeName, OciRuntime>;
  /** The runtime new machines run under, settled at first need (runtime-choice.ts). */
  private preferred: Promise<OciRuntime> | null = null;
  /** Pause, resume and a commit's freeze: the cgroup freezer, as the runtime's pause/resume, without a runtime process. */
  private readonly freezer = new MachineFreezer();
  private readonly network: HostNetwork;
  /** Machines booted ahead that a create claims (size 0: none). */
  private readonly warm: WarmPool;
  /** Disks formatted ahead that cold boots of VMs claim (size 0: none). */
  private readonly disks: DiskPool;
  /** Takes down what destroyed machines leave, behind their destroy. */
  private readonly reaper: MachineReaper;
  /** The machines' seccomp program as crun compiled it, handed back at each start instead of compiling it again. */
  private readonly seccompPrograms: SeccompPrograms;
  /**
   * Machines of VMs booted from nothing at once (disk, container and sshd: tens of milliseconds of
   * CPU each): a burst of cold creates or branch children takes turns, claims and destroys do not.
   */
  private readonly coldBoots = Slots.perCpu(4);
  private readonly images: ImageStore;

  constructor(private readonly options: SandboxDriverOptions) {
    this.log = options.log ?? (() => undefined);
    // Absolute paths: they end up in mount options and in losetup's view of backing files.
    this.stateDir = resolve(options.stateDir);
    this.snapshots = new SnapshotStore(resolve(options.snapshotDir));
    // Under the state directory: a restarted worker sees the containers the last one started.
    this.runtimes = { runc: runtimeUnder(this.stateDir, 'runc'), crun: runtimeUnder(this.stateDir, 'crun') };
    this.network = new HostNetwork(options.network ?? DEFAULT_NETWORK_SETTINGS, this.stateDir, this.log);
    this.images = new ImageStore(resolve(options.imageDir ?? `${options.snapshotDir}.images`));
    this.reaper = new MachineReaper(join(this.stateDir, '.reap'), (layout) => this.reap(layout), this.log);
    this.seccompPrograms = new SeccompPrograms(join(this.stateDir, '.seccomp'));
    this.warm = this.warmPool(options.warmPool ?? { size: 0, shape: { vcpu_count: 1, mem_size_mib: 512, fs_size_mib: 1024 } });
    this.disks = new DiskPool(join(this.stateDir, '.disks'), { size: options.spareDisks ?? 0, sizeMib: options.warmPool?.shape.fs_size_mib ?? 1024 }, this.log);
  }

  /** The warm machines live in `<state dir>/.warm`, their leases owned by that directory until claimed. */
  private warmPool(options: WarmPoolOptions): WarmPool {
    const warmDir = join(this.stateDir, '.warm');
    const network = new HostNetwork(this.options.network ?? DEFAULT_NETWORK_SETTINGS, warmDir, this.log);
    const host = {
      stateDir: this.stateDir,
      network: this.network,
      boot: async (layout: MachineLayout) => {
        await ensureBaseRootfs(this.options.cacheDir, this.log);
        return this.bootMachine(layout, network, NO_GROUP, this.movableBundle(layout.container));
      },
      destroy: (layout: MachineLayout) => this.teardown(layout, network),
      refreshSshEnvironment: (layout: MachineLayout, record: MachineRecord) => refreshSshEnvironment(this.execTarget(layout, record)),
      log: this.log,
    };
    return new WarmPool(host, options);
  }

  /** Fails closed: a limit or a confinement the machines need that this host cannot give is a "no". */
  async probe(): Promise<DriverProbe> {
    if (process.getuid?.() !== 0) return { ok: false, reason: 'needs root (the OCI runtime, mounts, cgroups)' };
    const missing = await missingTools(HOST_TOOLS);
    if (missing.length > 0) {
      return { ok: false, reason: `${missing.join(', ')} not installed (perl, util-linux, btrfs-progs, coreutils, iproute2, nftables)` };
    }
    const runtime = await planOciRuntime(this.options.runtime ?? 'auto').catch((error: Error) => error);
    if (runtime instanceof Error) return { ok: false, reason: runtime.message };
    const cgroups = await probeCgroups();
    if (!cgroups.ok) return { ok: false, reason: cgroups.reason };
    const filesystems = await readFile('/proc/filesystems', 'utf8');
    for (const fs of ['overlay', 'btrfs']) {
      if (!new RegExp(`\\t${fs}$`, 'm').test(filesystems)) return { ok: false, reason: `${fs} not available in this kernel` };
    }
    const userNamespaces = Number((await readFile('/proc/sys/user/max_user_namespaces', 'utf8').catch(() => '0')).trim());
    if (!(userNamespaces > 0)) return { ok: false, reason: 'user namespaces are disabled (user.max_user_namespaces is 0)' };
    if (!/^Seccomp:/m.test(await readFile('/proc/self/status', 'utf8'))) return { ok: false, reason: 'the kernel has no seccomp' };
    if (!existsSync(baseRootfsPath(this.options.cacheDir)) && (await missingTools(['debootstrap'])).length > 0) {
      return { ok: false, reason: 'no base root filesystem cached and debootstrap not installed' };
    }
    if (!existsSync(kitLayerPath(this.options.cacheDir))) {
      const kitTools = await missingTools(KIT_TOOLS);
      if (kitTools.length > 0) return { ok: false, reason: `no guest kit cached and cannot build one: missing ${kitTools.join(', ')} (apt debootstrap gcc libc6-dev patchelf)` };
    }
    const version = (await runCommand(runtime.name, ['--version'])).split('\n')[0];
    return {
      ok: true,
      reason:
        `${version} (${runtime.reason}): user namespaces (guest root = host uid ${GUEST_IDS.hostFirst}), seccomp, no_new_privs + ` +
        `overlayfs + btrfs loop disks + ${cgroups.reason} + a network namespace per machine on bridge ${this.network.plan.bridge}`,
    };
  }

  async prepare(): Promise<void> {
    await this.preferredRuntime();
    await ensureBaseRootfs(this.options.cacheDir, this.log);
    await this.kit();
    await this.network.ensureReady();
    // Logged, since it changes the host (as the network's forwarding does).
    for (const change of await ensureKeyQuota()) this.log(`sandbox: room for machines' session keyrings (${change})`);
    // A speed-up, not a need: a host that refuses it runs machines as before, each exec after a pause ~12 ms slower.
    await favorCgroupMoves().then(
      (change) => change && this.log(`sandbox: ${change}`),
      (error: Error) => this.log(`sandbox: cgroup moves stay slow after a quiet spell (${FAVOR_DYNMODS} refused: ${error.message})`),
    );
    await this.reaper.start();
    await ensurePrivateDirectory(this.stateDir);
    await this.disks.start();
    await this.warm.start();
  }

  /**
   * The runtime new machines run under: planned and, where the plan moves cgroup controllers,
   * carried out once (logged); tried again after a failure.
   */
  private preferredRuntime(): Promise<OciRuntime> {
    const setting = this.options.runtime ?? 'auto';
    this.preferred ??= planOciRuntime(setting)
      .then((plan) => applyOciRuntimePlan(setting, plan, this.log))
      .then((plan) => {
        this.log(`sandbox: new machines run under ${plan.name} (${plan.reason})`);
        return this.runtimes[plan.name];
      });
    this.preferred.catch(() => (this.preferred = null));
    return this.preferred;
  }

  private kit(): Promise<SandboxKit> {
    return ensureKitLayer(this.options.cacheDir, this.log);
  }

  /** Stops filling the pools and destroys their waiting machines and disks (the VMs' machines stay); waits for the reaper. */
  async close(): Promise<void> {
    await this.warm.stop();
    await this.disks.stop();
    await this.reaper.idle();
  }

  /** Resolves once every destroyed machine's leftovers are taken down (tests that look at the host). */
  async reaped(): Promise<void> {
    await this.reaper.idle();
  }

  /** Resolves once the warm pool holds all the machines it keeps (at once without a pool). */
  async warmPoolFull(): Promise<void> {
    await this.warm.whenFull();
  }

  /** Resolves once the disk pool holds all the spare disks it keeps (at once without a pool). */
  async spareDisksFull(): Promise<void> {
    await this.disks.whenFull();
  }

  /**
   * Destroys every warm machine in the state directory, whichever process made it (this driver's
   * pool stops first), and takes down what destroyed machines left there: for whoever cleans up
   * after workers that were killed (tests, an operator).
   */
  async destroyWarmMachines(): Promise<void> {
    await this.warm.stop();
    await this.warm.destroyLeftovers();
    await this.disks.stop();
    await this.disks.destroyLeftovers();
    await this.reaper.start();
    await this.reaper.idle();
  }

  async addresses(vm_id: string): Promise<MachineAddresses | null> {
    const lease = await this.network.leaseOf(vm_id);
    return lease && { ipv6: lease.ipv6, ipv4: lease.ipv4, mac: lease.mac };
  }

  async sweep(): Promise<void> {
    await this.network.sweep();
  }

  async create(spec: MachineSpec): Promise<MachineInfo> {
    const image_id = spec.image_id ?? null;
    if (!image_id) {
      if (spec.image_name !== 'default') throw new Error(`sandbox has no image "${spec.image_name}" (only "default" or a built image_id)`);
      // The warm pool holds machines of the default image only.
      const claimed = await this.warm.claim(spec);
      if (claimed) return claimed;
      this.busy();
      await ensureBaseRootfs(this.options.cacheDir, this.log);
      const hasDisk = await this.reserveMachine({ spec, source_snapshot_id: null, chain: { snapshots: [], base: true, image_id: null } });
      return this.bootReserved(spec.vm_id, hasDisk);
    }
    this.busy();
    // Claimed under the image store's lock: a deleteImage sees the machine, or the machine sees no image.
    const hasDisk = await this.images.withLock(async () => {
      const image = await this.images.read(image_id);
      if (!image) throw new ImageNotFoundError(image_id);
      const fs_size_mib = Math.max(spec.fs_size_mib, image.size_mib);
      return this.reserveMachine({ spec: { ...spec, fs_size_mib }, source_snapshot_id: null, chain: { snapshots: [], base: true, image_id } });
    });
    return this.bootReserved(spec.vm_id, hasDisk);
  }

  async startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec): Promise<MachineInfo> {
    this.busy();
    // Under the snapshot lock, so a concurrent deleteSnapshot sees the machine as a dependant.
    const hasDisk = await this.snapshots.withLock(async () => {
      const stored = await this.liveSnapshot(snapshot_id);
      const { vcpu_count, mem_size_mib, fs_size_mib } = stored.info;
      return this.reserveMachine({
        spec: { ...spec, vcpu_count, mem_size_mib, fs_size_mib, image_name: stored.image_name, image_id: stored.chain.image_id ?? null },
        source_snapshot_id: snapshot_id,
        chain: stored.chain,
      });
    });
    return this.bootReserved(spec.vm_id, hasDisk);
  }

  /** A machine is being made or destroyed: the pools refill once the driver is quiet. */
  private busy(): void {
    this.warm.busy();
    this.disks.busy();
  }

  /**
   * Claims the machine's directory (failing if the vm_id exists), moves a spare disk of its size
   * in when the pool has one (the directory it claimed is replaced by the spare's, 0700 as well),
   * and records what it sits on. Says whether the machine's disk is there already.
   */
  private async reserveMachine(record: MachineRecord): Promise<boolean> {
    // 0700: no other local user gets in; what is inside is host root's alone (overlayfs reads the
    // layers with the mounter's rights, and the machine's root is mounted outside: MACHINE_ROOTS_DIR).
    await ensurePrivateDirectory(this.stateDir);
    const layout = new MachineLayout(this.stateDir, record.spec.vm_id);
    await layout.claim();
    await ensurePrivateDirectory(layout.dir);
    const hasDisk = await this.disks.claimInto(layout.dir, record.spec.fs_size_mib);
    await layout.writeRecord(record);
    return hasDisk;
  }

  /** Boots a reserved machine of a VM (at most coldBoots at once), on its disk if it has one; undone entirely on failure. */
  private async bootReserved(vm_id: string, hasDisk: boolean): Promise<MachineInfo> {
    const layout = new MachineLayout(this.stateDir, vm_id);
    const record = (await layout.readRecord())!;
    try {
      return await this.coldBoots.run(() => this.bootMachine(layout, this.network, record.spec.network_group, layout.dir, hasDisk));
    } catch (error) {
      await this.destroy(vm_id).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The runtime bundle of a machine whose directory will move (a warm machine's, renamed to its
   * VM's when claimed): runc goes into the bundle directory for every exec, so it must stay where
   * it was at the start. Under the state directory, by the id the machine runs under for life.
   */
  private movableBundle(container: string): string {
    return join(this.stateDir, '.bundles', container);
  }

  /**
   * Disk, identity layer, overlay root, network (on `network`, in `group`) and container of the
   * machine reserved in `layout`, up once its sshd listens on its address, reached from the host
   * (waitUntilSshListens); `bundle` is the runtime's bundle directory (the machine's own, unless
   * it will move); `hasDisk`: its disk is mounted already (a spare it claimed). On failure, what it made is left for the caller's
   * teardown.
   */
  private async bootMachine(layout: MachineLayout, network: HostNetwork, group: string, bundle = layout.dir, hasDisk = false): Promise<MachineInfo> {
    const record = (await layout.readRecord())!;
    const { spec } = record;
    const id = layout.container;
    // Checked per machine, not once: a limit that cannot be applied fails the create (closed).
    const cgroups = await probeCgroups();
    if (!cgroups.ok) throw new Error(`machine ${spec.vm_id} cannot get its limits: ${cgroups.reason}`);
    const { layer: kitLayer } = await this.kit();
    const runtime = await this.preferredRuntime();
    // The network (host lock, nft) and the files (disk, layers, mounts) do not depend on each
    // other: made at once. Both are settled before a failure goes up, so the caller's teardown
    // finds all that was made.
    const [leased, root] = await Promise.allSettled([
      network.attach(layout.vmId, group, 'veth'),
      (async () => {
        if (!hasDisk) await createMachineDisk(layout.diskImage, layout.disk, spec.fs_size_mib);
        await writeIdentityLayer(layout.identity, spec);
        // The kit right under the identity: it shadows anything an image keeps at /.arbor.
        await mountOverlayRoot([layout.identity, kitLayer, ...this.lowerDirs(record.chain)], layout);
      })(),
    ]);
    if (root.status === 'rejected') throw root.reason;
    if (leased.status === 'rejected') throw leased.reason;
    const lease = leased.value;
    const seccomp = machineSeccomp();
    const seccompProgram = await this.seccompPrograms.lookup(runtime, seccomp);
    const config = containerConfig({
      vmId: id,
      hostname: hostnameOf(spec),
      rootfs: layout.merged,
      networkSetup: network.namespaceSetupArgv(lease),
      memMib: spec.mem_size_mib,
      vcpus: spec.vcpu_count,
      limitSwap: cgroups.swapAccounted,
      init: INIT,
      seccompProgram,
    });
    await writeJsonAtomic(layout.config, config, { mode: 0o600 }); // a restarted worker's runtime reads it again
    if (bundle !== layout.dir) {
      await ensurePrivateDirectory(bundle);
      await writeJsonAtomic(join(bundle, 'config.json'), config, { mode: 0o600 });
    }
    await runtime.run(id, bundle, layout.initLog);
    if (!seccompProgram) {
      await this.seccompPrograms.keep(runtime, id, seccomp).catch((error: Error) => this.log(`sandbox: the compiled seccomp program is not kept, so each start compiles it: ${error.message}`));
    }
    const pid = await runtime.initPid(id);
    const init = pid ? await identify(pid) : null;
    if (!init) throw new Error(`sandbox init of ${spec.vm_id} vanished right after starting`);
    await layout.writeRecord({ ...record, init, runtime: runtime.name });
    await waitUntilSshListens(lease.ipv6, SSH_ANSWER_TIMEOUT_MS, () => isAlive(init));
    this.log(`sandbox: machine ${spec.vm_id} running (init pid ${init.pid}, ${lease.ipv6}, ${lease.ipv4})`);
    return { vm_id: spec.vm_id, state: 'running', pid: init.pid, addresses: { ipv6: lease.ipv6, ipv4: lease.ipv4, mac: lease.mac } };
  }

  /** The machine's read-only layers below the kit: its snapshot layers, then its image (unless flattened in). */
  private lowerDirs(chain: LayerChain): string[] {
    const layers = chain.snapshots.map((id) => this.snapshots.layerDir(id));
    if (!chain.base) return layers;
    return [...layers, chain.image_id ? this.images.path(chain.image_id, 'layer') : baseRootfsPath(this.options.cacheDir)];
  }

  async destroy(vm_id: string): Promise<void> {
    if (!isSafeId(vm_id)) return; // no such machine can exist
    this.busy();
    await this.locks.run(vm_id, () => this.destroyLocked(vm_id));
  }

  /**
   * Stops the machine (its init killed, thawed first: its PID namespace goes with it), releases its
   * network, and hands its directory to the reaper, which takes down the rest behind the answer
   * (machine-reaper.ts): cgroups, runc's state, mounts, loop device and files. From the return on
   * no process of it runs, nothing reaches it and no list shows it.
   */
  private async destroyLocked(vm_id: string): Promise<void> {
    const layout = await this.layoutOf(vm_id);
    const detached = this.network.detach(vm_id);
    try {
      if (!existsSync(layout.dir)) return;
      const record = await layout.readRecord();
      if (record?.init) {
        await thawMachine(layout.container);
        if (!(await killAndWait(record.init))) throw new Error(`sandbox init ${record.init.pid} survived SIGKILL`);
      } else {
        await removeLeftoverCgroups(layout.container); // an init never recorded (a crash as it started)
      }
    } finally {
      await detached;
    }
    if (!(await this.reaper.take(layout))) await this.teardown(layout, null);
  }

  /** Takes down a stopped machine the reaper holds (its network already released). */
  private async reap(layout: MachineLayout): Promise<void> {
    await this.teardown(layout, null);
  }

  /** The machine's paths, under the id it runs by (its record says, for a claimed warm machine). */
  private async layoutOf(vm_id: string): Promise<MachineLayout> {
    const record = await new MachineLayout(this.stateDir, vm_id).readRecord();
    return new MachineLayout(this.stateDir, vm_id, containerOf(record, vm_id));
  }

  /**
   * Everything the machine in `layout` holds, and its lease on `network` (by its directory's name)
   * unless the network is already released (null).
   */
  private async teardown(layout: MachineLayout, network: HostNetwork | null): Promise<void> {
    const record = await layout.readRecord();
    const id = layout.container;
    // The network goes while the machine is killed (batched with other machines' on the host
    // lock); before the machine's directory goes: a lease whose directory is gone is a sweep's.
    const detached = network?.detach(layout.vmId);
    try {
      // Everything in the machine's cgroups is killed (thawed first) and the cgroups removed by
      // the driver itself, then the runtime's state of it dropped: what `delete --force` does,
      // without a runtime process (runc's, a Go binary, was the dearest step of a destroy, and a
      // hundred destroys would run one each). The init's death takes its whole PID namespace
      // along; an init outside the cgroups (a crash before it joined them) is killed by its
      // identity. Both runtimes' state is looked for: a crash may come before the record names one.
      await removeLeftoverCgroups(id);
      if (record?.init && !(await killAndWait(record.init))) throw new Error(`sandbox init ${record.init.pid} survived SIGKILL`);
      for (const runtime of Object.values(this.runtimes)) if (runtime.knows(id)) await runtime.forget(id);
      await rm(this.movableBundle(id), { recursive: true, force: true });
    } finally {
      await detached;
    }
    const device = await diskDeviceOf(layout.disk);
    await unmountAllUnder(layout.merged, layout.dir);
    await rm(layout.merged, { recursive: true, force: true });
    if (existsSync(layout.diskImage)) await releaseMachineDisk(layout.diskImage, device);
    await rm(layout.dir, { recursive: true, force: true });
    // The machine may have been the last thing holding a deleted snapshot's layer.
    if (record?.chain.snapshots.length) await this.snapshots.withLock(() => this.collectSnapshotGarbage());
  }

  /** Pause and resume wait for a commit in progress, whose thaw would otherwise undo a pause. */
  async pause(vm_id: string): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { layout } = await this.requireLive(vm_id);
      await this.setFrozen(layout, true);
    });
  }

  async resume(vm_id: string): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { layout } = await this.requireLive(vm_id);
      await this.setFrozen(layout, false);
    });
  }

  /** Freezes or thaws (the cgroup freezer); idempotent, as the port wants. */
  private async setFrozen(layout: MachineLayout, frozen: boolean): Promise<void> {
    if ((await isMachineFrozen(layout.container)) === !frozen) await this.freezer.setFrozen(layout.container, frozen);
  }

  async status(vm_id: string): Promise<MachineState | null> {
    if (!isSafeId(vm_id)) return null;
    const layout = new MachineLayout(this.stateDir, vm_id);
    if (!existsSync(layout.dir)) return null;
    const record = await layout.readRecord();
    if (!record?.init || !(await isAlive(record.init))) return 'dead';
    const container = containerOf(record, vm_id);
    // A machine an older driver started (bare namespaces, no container config, or the host's
    // network namespace, which would leave the host in its reach) is not run by this one: dead, so
    // the worker reports it and destroy clears it away.
    if (!existsSync(layout.config) || record.spec.network_group === undefined) return 'dead';
    const frozen = await isMachineFrozen(container);
    if (frozen === null) return 'dead';
    return frozen ? 'paused' : 'running';
  }

  async list(): Promise<MachineInfo[]> {
    const machines: MachineInfo[] = [];
    for (const vm_id of await MachineDirectory.vmIdsIn(this.stateDir)) {
      const state = await this.status(vm_id).catch(() => null);
      if (state === null) continue;
      const record = await new MachineLayout(this.stateDir, vm_id).readRecord();
      machines.push({ vm_id, state, pid: record?.init?.pid });
    }
    return machines;
  }

  async exec(vm_id: string, spec: ExecSpec, onChunk: ExecChunkHandler): Promise<ExecResult> {
    const { layout, record } = await this.requireRunning(vm_id);
    // Like a login: defaults, then the machine's /etc/environment (read inside it), then spec.env.
    return execInContainer(this.execTarget(layout, record), { ...spec, environmentFile: '/etc/environment' }, onChunk);
  }

  async readFile(vm_id: string, path: string, options: ReadFileOptions = {}): Promise<Buffer> {
    const { layout, record } = await this.requireRunning(vm_id);
    return readGuestFile(this.execTarget(layout, record), path, options.max_bytes);
  }

  async writeFile(vm_id: string, path: string, content: Buffer, options: WriteFileOptions = {}): Promise<void> {
    const { layout, record } = await this.requireRunning(vm_id);
    await writeGuestFile(this.execTarget(layout, record), path, content, {
      mode: options.mode ?? 0o644,
      createDirs: options.create_dirs ?? false,
    });
  }

  private execTarget(layout: MachineLayout, record: MachineRecord): ContainerExecTarget {
    return { runtime: this.runtimes[runtimeOf(record)], id: layout.container, scratchDir: layout.dir };
  }

  /**
   * Copies the machine's upper layer, frozen so no write lands half-way, into a new immutable
   * snapshot layer that sits on the machine's own layers. Past MAX_SNAPSHOT_LAYERS the chain is
   * flattened into one self-contained layer (after the thaw: the copy reads only immutable layers).
   */
  async commit(vm_id: string, snapshot_id: string, options: CommitOptions = {}): Promise<SnapshotInfo> {
    if (!isSafeSnapshotId(snapshot_id)) throw new Error(`invalid snapshot id ${JSON.stringify(snapshot_id)}`);
    return this.locks.run(vm_id, () => this.commitLocked(vm_id, snapshot_id, options));
  }

  private async commitLocked(vm_id: string, snapshot_id: string, options: CommitOptions): Promise<SnapshotInfo> {
    const { layout, record } = await this.requireLive(vm_id);
    await ensurePrivateDirectory(this.snapshots.dir);
    return this.snapshots.withLock(async () => {
      if (await this.snapshots.read(snapshot_id)) throw new Error(`snapshot ${snapshot_id} already exists`);
      const scratch = this.snapshots.scratchDir(snapshot_id);
      await rm(scratch, { recursive: true, force: true });
      await mkdir(scratch);
      try {
        const captured = join(scratch, 'layer');
        const wasRunning = (await isMachineFrozen(layout.container)) === false;
        if (wasRunning) await this.freezer.setFrozen(layout.container, true);
        try {
          await runCommand('cp', ['-a', `${layout.upper}/.`, captured]);
        } finally {
          if (wasRunning && !options.keep_paused) await this.freezer.setFrozen(layout.container, false);
        }
        let chain: LayerChain = { snapshots: [snapshot_id, ...record.chain.snapshots], base: record.chain.base, image_id: record.chain.image_id ?? null };
        if (chain.snapshots.length > MAX_SNAPSHOT_LAYERS) {
          const flat = join(scratch, 'flat');
          await flattenLayers([captured, ...this.lowerDirs(record.chain)], join(scratch, 'view'), flat);
          await rm(captured, { recursive: true, force: true });
          await runCommand('mv', ['-T', flat, captured]);
          chain = { snapshots: [snapshot_id], base: false, image_id: chain.image_id };
        }
        const { spec } = record;
        const info: SnapshotInfo = {
          snapshot_id,
          source_vm_id: vm_id,
          includes_memory: false,
          vcpu_count: spec.vcpu_count,
          mem_size_mib: spec.mem_size_mib,
          fs_size_mib: spec.fs_size_mib,
          created_at: new Date().toISOString(),
          size_bytes: await allocatedBytes(captured),
        };
        await this.snapshots.publish({ info, image_name: spec.image_name, chain });
        this.log(`sandbox: snapshot ${snapshot_id} of ${vm_id} (${chain.snapshots.length} layer(s))`);
        return info;
      } catch (error) {
        await unmountAllUnder(scratch);
        await rm(scratch, { recursive: true, force: true });
        throw error;
      }
    });
  }

  /** Grows the disk from the host side, so a paused machine stays paused and sees it once resumed. */
  async resizeDisk(vm_id: string, fs_size_mib: number): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { layout, record } = await this.requireLive(vm_id);
      const current = record.spec.fs_size_mib;
      if (!Number.isInteger(fs_size_mib) || fs_size_mib <= current) {
        throw new Error(`disk of ${vm_id} is ${current} MiB; it can only grow, not to ${fs_size_mib} MiB`);
      }
      await growMachineDisk(layout.diskImage, layout.disk, fs_size_mib);
      await layout.writeRecord({ ...record, spec: { ...record.spec, fs_size_mib } });
    });
  }

  /**
   * An image is a read-only layer like the base: the root filesystem moved into the image store
   * (or copied, across file systems), checked and made a layer in place by the kit's helper
   * (images/root-tree.ts: ids shifted into the machines' range, device nodes and setuid bits gone,
   * nothing followed out of it). Machines of it get the kit and their identity on top, as on the
   * base. The store's directories are 0700.
   */
  async buildImage(spec: ImageBuildSpec, onProgress?: ImageBuildProgress): Promise<ImageInfo> {
    const { kit } = await this.kit();
    return this.images.build(spec.image_id, async (scratch) => {
      onProgress?.('configuring', 'checking the root filesystem and making it a layer');
      const layer = join(scratch, 'layer');
      await moveOrCopyTree(spec.rootfs_dir, layer);
      const { bytes, entries } = await prepareSandboxLayer(kit.helper, layer, { first: GUEST_IDS.hostFirst, count: GUEST_IDS.count });
      onProgress?.('creating_snapshot', `a read-only layer of ${entries} entries`);
      this.log(`sandbox: image ${spec.image_id} built (${entries} entries, ${(bytes / 2 ** 20).toFixed(1)} MiB)`);
      return imageSizeMib(bytes, spec.extra_size_mib);
    });
  }

  getImage(image_id: string): Promise<ImageInfo | null> {
    return this.images.read(image_id);
  }

  /** Refuses while a machine or a snapshot sits on the image's layer (a flattened snapshot holds its own copy). */
  async deleteImage(image_id: string): Promise<void> {
    await this.images.withLock(() =>
      this.snapshots.withLock(async () => {
        if (!(await this.images.read(image_id))) return;
        const onImage = (chain: LayerChain) => chain.base && chain.image_id === image_id;
        const users = [
          ...(await this.machineRecords()).filter((r) => onImage(r.chain)).map((r) => r.spec.vm_id),
          ...(await this.snapshots.readAll()).filter((s) => onImage(s.chain)).map((s) => s.info.snapshot_id),
        ];
        if (users.length > 0) throw new ImageInUseError(image_id, users);
        await this.images.remove(image_id);
      }),
    );
  }

  async getSnapshot(snapshot_id: string): Promise<SnapshotInfo | null> {
    if (!isSafeSnapshotId(snapshot_id)) return null;
    const stored = await this.snapshots.read(snapshot_id);
    return stored && !stored.deleted ? stored.info : null;
  }

  async listSnapshots(): Promise<SnapshotInfo[]> {
    const stored = await this.snapshots.readAll();
    return stored
      .filter((snapshot) => !snapshot.deleted)
      .map((snapshot) => snapshot.info)
      .sort((x, y) => x.created_at.localeCompare(y.created_at));
  }

  /**
   * Refuses while a machine started from the snapshot exists. Later snapshots (and their machines)
   * may still sit on its layer: then it is only hidden, and its files go when the last user does.
   * Deleting an unknown snapshot succeeds (the worker may replay).
   */
  async deleteSnapshot(snapshot_id: string): Promise<void> {
    if (!isSafeSnapshotId(snapshot_id)) return;
    await this.snapshots.withLock(async () => {
      const stored = await this.snapshots.read(snapshot_id);
      if (!stored || stored.deleted) return;
      const dependants = (await this.machineRecords()).filter((r) => r.source_snapshot_id === snapshot_id);
      if (dependants.length > 0) {
        const ids = dependants.map((r) => r.spec.vm_id).join(', ');
        throw new Error(`snapshot ${snapshot_id} is in use by ${dependants.length} machine(s) started from it: ${ids}`);
      }
      await this.snapshots.markDeleted(stored);
      await this.collectSnapshotGarbage();
    });
  }

  private async collectSnapshotGarbage(): Promise<void> {
    await this.snapshots.collectGarbage((await this.machineRecords()).map((r) => r.chain));
  }

  private async liveSnapshot(snapshot_id: string): Promise<StoredSnapshot> {
    const stored = isSafeSnapshotId(snapshot_id) ? await this.snapshots.read(snapshot_id) : null;
    if (!stored || stored.deleted) throw new SnapshotNotFoundError(snapshot_id);
    return stored;
  }

  private async machineRecords(): Promise<MachineRecord[]> {
    const records: MachineRecord[] = [];
    for (const vm_id of await MachineDirectory.vmIdsIn(this.stateDir)) {
      const record = await new MachineLayout(this.stateDir, vm_id).readRecord();
      if (record) records.push(record);
    }
    return records;
  }

  /** The machine exists and its init runs (it may be paused). */
  private async requireLive(
    vm_id: string,
  ): Promise<{ layout: MachineLayout; record: MachineRecord; init: ProcessIdentity; state: 'running' | 'paused' }> {
    const state = await this.status(vm_id);
    if (!state) throw new MachineNotFoundError(vm_id);
    const layout = await this.layoutOf(vm_id);
    const record = await layout.readRecord();
    if (state === 'dead' || !record?.init) throw new MachineStateError(vm_id, `machine ${vm_id} is dead`);
    return { layout, record, init: record.init, state };
  }

  /** The machine runs: a process entering a frozen machine would hang, so a paused one is refused. */
  private async requireRunning(vm_id: string): Promise<{ layout: MachineLayout; record: MachineRecord; init: ProcessIdentity }> {
    // A commit freezes the machine for a moment: wait for it rather than refuse, as qemu does.
    await this.locks.idle(vm_id);
    const live = await this.requireLive(vm_id);
    if (live.state !== 'running') throw new MachineStateError(vm_id, `machine ${vm_id} is paused`);
    return live;
  }
}
