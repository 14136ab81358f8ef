import { existsSync } from 'node:fs';
import { copyFile, link, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MachineNotFoundError,
  MachineStateError,
  SnapshotNotFoundError,
  type CommitOptions,
  type DriverCapabilities,
  type DriverProbe,
  type ExecChunk,
  type ExecResult,
  type ExecSpec,
  type HypervisorDriver,
  type MachineInfo,
  type MachineSpec,
  type MachineState,
  type SnapshotInfo,
  type SnapshotMachineSpec,
  type WriteFileOptions,
} from '../hypervisor-driver.port';
import { MachineLocks } from '../machine-locks';
import { isAlive } from '../sandbox/process-identity';
import { runCommand } from '../sandbox/run-command';
import { GuestAgentClient } from './guest-agent-client';
import { runInGuestOrFail } from './guest-command';
import { execInGuest } from './guest-exec';
import { readGuestFile, writeGuestFile } from './guest-files';
import { applyGuestIdentity, setGuestClock } from './guest-identity';
import { ensureQemuBaseImage, readQemuBaseImage, type QemuBaseImage } from './image/qemu-base-image';
import { chooseAccel, type AccelChoice } from './qemu-accel-probe';
import { DISK_DEVICE, qemuArguments, type QemuAccel } from './qemu-command-line';
import { isSafeId, QemuMachineLayout, type QemuMachineRecord } from './qemu-machine-layout';
import { killAndWait, launchQemu, type QemuProcess } from './qemu-process';
import { QemuSnapshotStore, type QemuSnapshotRecord } from './qemu-snapshot-store';
import { backingChain, createOverlay, createOverlayOnFuture, flattenOnto } from './qcow2-chain';
import { QmpClient } from './qmp-client';

export interface QemuDriverOptions {
  /** Per-machine state (disk overlays, sockets, records); machines are found here after a restart. */
  stateDir: string;
  /** Host-wide cache shared by data directories and test runs (the base image). */
  cacheDir: string;
  /** Immutable snapshots (disk layer + memory); children's disks point into it. */
  snapshotDir: string;
  log?: (line: string) => void;
  accel?: 'auto' | 'kvm' | 'tcg';
}

/**
 * Longest chain of snapshot layers a snapshot may sit on before its layer is flattened onto the
 * base image: each layer is one more lookup on a cache miss and one more open file per machine,
 * while flattening costs a full copy of the changed data; 8 keeps reads near a plain overlay's
 * and flattens once every 8 generations.
 */
export const MAX_CHAIN_DEPTH = 8;
/** Boots under TCG take ~6.5 s alone and much longer when several share 2 cores. */
const BOOT_TIMEOUT_MS = 180_000;
/** The default (128 MiB/s) makes a memory snapshot pause the source ~0.8 s; unlimited ~180 ms. */
const MIGRATION_BANDWIDTH = 64 * 1024 * 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Connections to one running machine; rebuilt lazily after a worker restart (re-attach). */
interface Attachment {
  qmp: Promise<QmpClient> | null;
  agent: GuestAgentClient;
  /** Set when this process started the QEMU (it is our child and we reap it). */
  process?: QemuProcess;
}

/**
 * Real virtual machines: QEMU (KVM where a probe VM boots, else TCG) with QMP for lifecycle and
 * snapshots, the guest agent on virtio-serial for exec and files, qcow2 overlays for disks and
 * migration to a file for memory. No network device yet.
 */
export class QemuDriver implements HypervisorDriver {
  readonly name = 'qemu';
  readonly capabilities: DriverCapabilities = { memory_snapshots: true };
  private readonly log: (line: string) => void;
  private readonly snapshots: QemuSnapshotStore;
  private readonly attachments = new Map<string, Attachment>();
  /** Lifecycle operations on one machine (pause, resume, commit, resize, destroy) run one at a time. */
  private readonly locks = new MachineLocks();
  private accelChoice: Promise<AccelChoice> | null = null;
  private probed: DriverProbe | null = null;

  constructor(private readonly options: QemuDriverOptions) {
    this.log = options.log ?? (() => undefined);
    this.snapshots = new QemuSnapshotStore(options.snapshotDir);
  }

  /**
   * Usable when QEMU is installed and a base image is cached or can be built. Recommended (what
   * HYPERVISOR=auto prefers) only with KVM: the host alone rules KVM out cheaply where it can
   * (kvmUnavailableReason); only where KVM might work is the image built, if need be, and a probe
   * VM booted, since only a boot tells.
   */
  async probe(): Promise<DriverProbe> {
    if (this.probed) return this.probed;
    const missing = await missingTools(['qemu-system-x86_64', 'qemu-img']);
    if (missing.length > 0) return { ok: false, reason: `${missing.join(', ')} not installed (apt qemu-system-x86 qemu-utils)` };
    const image = await readQemuBaseImage(this.options.cacheDir);
    if (!image) {
      const builders = await missingTools(['debootstrap', 'apt-get', 'dpkg-deb', 'mkfs.ext4', 'cpio', 'gzip']);
      if (!existsSync('/bin/busybox')) builders.push('busybox (apt busybox-static)');
      if (builders.length > 0) return { ok: false, reason: `no base image cached and cannot build one: missing ${builders.join(', ')}` };
    }
    try {
      const choice = await this.accel(image);
      // Without KVM every boot is seconds of emulated CPU: usable, but not auto's first choice.
      this.probed = { ok: true, reason: choice.reason, recommended: choice.accel === 'kvm' };
    } catch (error) {
      this.probed = { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
    return this.probed;
  }

  async prepare(): Promise<void> {
    const image = await ensureQemuBaseImage(this.options.cacheDir, this.log);
    await this.accel(image);
  }

  /**
   * Drops this process's QMP and agent connections, leaving the machines running: QEMU serves one
   * client per socket, so a worker that hands over (or a test that simulates a restart) lets go.
   */
  async close(): Promise<void> {
    for (const attachment of this.attachments.values()) {
      attachment.agent.close();
      attachment.qmp?.then((qmp) => qmp.close()).catch(() => undefined);
      attachment.qmp = null;
    }
  }

  async create(spec: MachineSpec): Promise<MachineInfo> {
    if (spec.image_name !== 'default') throw new Error(`qemu has no image "${spec.image_name}" (only "default")`);
    const image = await ensureQemuBaseImage(this.options.cacheDir, this.log);
    const { accel } = await this.accel(image);
    const layout = await this.claimMachineDir(spec.vm_id);
    try {
      const disk = layout.layerPath(0);
      // The guest's init grows the file system to the disk at boot.
      await createOverlay(disk, image.disk, Math.max(spec.fs_size_mib, image.disk_size_mib));
      const record = await this.launch(layout, image, {
        vm_id: spec.vm_id,
        vcpu_count: spec.vcpu_count,
        mem_size_mib: spec.mem_size_mib,
        fs_size_mib: Math.max(spec.fs_size_mib, image.disk_size_mib),
        env: spec.env,
        identity: spec.identity,
        accel,
        disk,
        next_layer: 1,
        depth: 0,
      });
      const { agent } = this.attachment(layout);
      await agent.waitUntilReady(BOOT_TIMEOUT_MS, () => isAlive(record.process));
      await setGuestClock(agent);
      await applyGuestIdentity(agent, spec.identity, spec.env);
      this.log(`qemu: machine ${spec.vm_id} running (pid ${record.process.pid}, ${accel})`);
      return { vm_id: spec.vm_id, state: 'running', pid: record.process.pid };
    } catch (error) {
      await this.destroy(spec.vm_id).catch(() => undefined);
      throw error;
    }
  }

  async destroy(vm_id: string): Promise<void> {
    if (!isSafeId(vm_id)) return; // no such machine can exist
    // Destroy preempts: QEMU is stopped before the machine's lock is taken, so an operation stuck
    // on the machine (e.g. waiting on a guest agent that no longer answers) fails at once, its
    // sockets closed, instead of holding the lock, and this destroy, forever.
    const running = await new QemuMachineLayout(this.options.stateDir, vm_id).readRecord();
    if (running) await killAndWait(running.process, this.attachments.get(vm_id)?.process?.exited);
    await this.locks.run(vm_id, async () => {
      const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
      const record = await layout.readRecord();
      const attachment = this.attachments.get(vm_id);
      this.attachments.delete(vm_id);
      if (attachment) {
        attachment.agent.close();
        attachment.qmp?.then((qmp) => qmp.close()).catch(() => undefined);
      }
      if (record) await killAndWait(record.process, attachment?.process?.exited);
      await rm(layout.dir, { recursive: true, force: true });
    });
  }

  /** Under the machine's lock, so a pause never lands inside a commit (whose end would undo it). */
  async pause(vm_id: string): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { qmp, state } = await this.requireLive(vm_id);
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
      const { qmp, agent, record, layout, state } = await this.requireLive(vm_id);
      if (state === 'running') return;
      await qmp.execute('cont');
      if (record.captured?.frozen) await agent.request('guest-fsfreeze-thaw');
      const grown = record.pending_fs_size_mib;
      if (grown !== undefined) await this.growDisk(qmp, agent, grown);
      await layout.writeRecord({ ...record, fs_size_mib: grown ?? record.fs_size_mib, captured: undefined, pending_fs_size_mib: undefined });
    });
  }

  async status(vm_id: string): Promise<MachineState | null> {
    if (!isSafeId(vm_id)) return null;
    const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
    if (!existsSync(layout.dir)) return null;
    const record = await layout.readRecord();
    if (!record || !(await isAlive(record.process))) return 'dead';
    let status: string;
    try {
      ({ status } = await (await this.qmp(layout)).execute<{ status: string }>('query-status'));
    } catch (error) {
      // QEMU killed a moment ago: alive at the check above, its QMP socket closed already (the
      // kernel closes a dying process's files before it shows as exited).
      for (let waited = 0; waited < 2000; waited += 20) {
        if (!(await isAlive(record.process))) return 'dead';
        await sleep(20);
      }
      throw error;
    }
    if (status === 'running') return 'running';
    if (['internal-error', 'io-error', 'shutdown', 'guest-panicked'].includes(status)) return 'dead';
    return 'paused'; // paused, postmigrate, inmigrate, finish-migrate, ...
  }

  async list(): Promise<MachineInfo[]> {
    const names = await readdir(this.options.stateDir).catch(() => [] as string[]);
    const machines: MachineInfo[] = [];
    for (const name of names) {
      const state = await this.status(name).catch(() => 'dead' as const);
      if (state === null) continue;
      const record = await new QemuMachineLayout(this.options.stateDir, name).readRecord();
      machines.push({ vm_id: name, state, pid: record?.process.pid });
    }
    return machines;
  }

  async exec(vm_id: string, spec: ExecSpec, onChunk: (chunk: ExecChunk) => void): Promise<ExecResult> {
    const { agent } = await this.requireRunning(vm_id);
    return execInGuest(agent, spec, onChunk);
  }

  async readFile(vm_id: string, path: string): Promise<Buffer> {
    const { agent } = await this.requireRunning(vm_id);
    return readGuestFile(agent, path);
  }

  async writeFile(vm_id: string, path: string, content: Buffer, options?: WriteFileOptions): Promise<void> {
    const { agent } = await this.requireRunning(vm_id);
    await writeGuestFile(agent, path, content, options);
  }

  /**
   * Memory + disk at one instant: freeze the guest's file systems (so the disk layer is clean on
   * its own too), stop, take the external disk snapshot (the current top becomes immutable and
   * the machine goes on on a new overlay), migrate the memory to a file, continue, thaw. A machine
   * that was paused, or is to stay paused, never runs: it is left as the migration left it
   * (`captured`), and resume does the rest.
   */
  async commit(vm_id: string, snapshot_id: string, options: CommitOptions = {}): Promise<SnapshotInfo> {
    if (!isSafeId(snapshot_id)) throw new Error(`invalid snapshot id ${JSON.stringify(snapshot_id)}`);
    return this.locks.run(vm_id, () => this.commitLocked(vm_id, snapshot_id, options));
  }

  async startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec): Promise<MachineInfo> {
    const snapshot = await this.snapshots.read(snapshot_id);
    if (!snapshot) throw new SnapshotNotFoundError(snapshot_id);
    const image = await ensureQemuBaseImage(this.options.cacheDir, this.log);
    const layout = await this.claimMachineDir(spec.vm_id);
    try {
      const disk = layout.layerPath(0);
      await createOverlay(disk, this.snapshots.diskPath(snapshot_id));
      const { info } = snapshot;
      const record = await this.launch(
        layout,
        image,
        {
          vm_id: spec.vm_id,
          vcpu_count: info.vcpu_count,
          mem_size_mib: info.mem_size_mib,
          fs_size_mib: info.fs_size_mib,
          env: spec.env,
          identity: spec.identity,
          accel: snapshot.accel,
          disk,
          next_layer: 1,
          depth: snapshot.depth,
        },
        true,
      );
      const qmp = await this.qmp(layout);
      await qmp.execute('migrate-incoming', { uri: `exec:cat ${shellQuote(this.snapshots.memoryPath(snapshot_id))}` });
      await waitWhileStatus(qmp, 'inmigrate', record);
      await qmp.execute('cont');
      const { agent } = this.attachment(layout);
      if (snapshot.frozen) await agent.request('guest-fsfreeze-thaw');
      await setGuestClock(agent);
      await applyGuestIdentity(agent, spec.identity, spec.env);
      this.log(`qemu: machine ${spec.vm_id} restored from ${snapshot_id} (pid ${record.process.pid})`);
      return { vm_id: spec.vm_id, state: 'running', pid: record.process.pid };
    } catch (error) {
      await this.destroy(spec.vm_id).catch(() => undefined);
      throw error;
    }
  }

  async branch(
    vm_id: string,
    snapshot_id: string,
    children: SnapshotMachineSpec[],
    options?: CommitOptions,
  ): Promise<{ snapshot: SnapshotInfo; machines: MachineInfo[] }> {
    const snapshot = await this.commit(vm_id, snapshot_id, options);
    const machines: MachineInfo[] = [];
    try {
      for (const child of children) machines.push(await this.startFromSnapshot(snapshot_id, child));
    } catch (error) {
      for (const machine of machines) await this.destroy(machine.vm_id).catch(() => undefined);
      throw error;
    }
    return { snapshot, machines };
  }

  /**
   * A running machine grows at once (QMP block_resize, then resize2fs in the guest). A paused one
   * stays paused: its new size is kept and applied at resume, because resize2fs needs the guest
   * running and, after a commit, QEMU must not touch the disk before `cont` takes it back.
   */
  async resizeDisk(vm_id: string, fs_size_mib: number): Promise<void> {
    await this.locks.run(vm_id, async () => {
      const { qmp, agent, record, layout, state } = await this.requireLive(vm_id);
      const current = record.pending_fs_size_mib ?? record.fs_size_mib;
      if (!Number.isInteger(fs_size_mib) || fs_size_mib <= current) {
        throw new Error(`disk of ${vm_id} is ${current} MiB; it can only grow (asked ${fs_size_mib} MiB)`);
      }
      if (state !== 'running') {
        await layout.writeRecord({ ...record, pending_fs_size_mib: fs_size_mib });
        return;
      }
      await this.growDisk(qmp, agent, fs_size_mib);
      await layout.writeRecord({ ...record, fs_size_mib });
    });
  }

  private async growDisk(qmp: QmpClient, agent: GuestAgentClient, fs_size_mib: number): Promise<void> {
    await qmp.execute('block_resize', { device: DISK_DEVICE, size: fs_size_mib * 1024 * 1024 });
    await runInGuestOrFail(agent, ['resize2fs', '/dev/vda']);
  }

  async getSnapshot(snapshot_id: string): Promise<SnapshotInfo | null> {
    return (await this.snapshots.read(snapshot_id))?.info ?? null;
  }

  async listSnapshots(): Promise<SnapshotInfo[]> {
    return (await this.snapshots.list()).map((record) => record.info);
  }

  /**
   * Refuses while a machine's disk chain runs through the snapshot's layer. When only other
   * snapshots' layers sit on it, the snapshot disappears (record and memory) but its disk layer
   * stays, retired, until the last layer above it is deleted.
   */
  async deleteSnapshot(snapshot_id: string): Promise<void> {
    if (!(await this.snapshots.read(snapshot_id))) return;
    const usedBy = await this.machineChainFiles();
    const users = usedBy.get(this.snapshots.diskPath(snapshot_id)) ?? [];
    if (users.length > 0) {
      throw new Error(`snapshot ${snapshot_id} is still the base of machine(s) ${users.join(', ')}: destroy them first`);
    }
    await this.snapshots.retire(snapshot_id);
    await this.snapshots.removeUnusedRetired(new Set(usedBy.keys()));
  }

  /** Every file in a machine's disk chain, with the machines whose chain holds it. */
  private async machineChainFiles(): Promise<Map<string, string[]>> {
    const files = new Map<string, string[]>();
    for (const name of await readdir(this.options.stateDir).catch(() => [] as string[])) {
      const record = isSafeId(name) ? await new QemuMachineLayout(this.options.stateDir, name).readRecord() : null;
      if (!record) continue;
      for (const file of await backingChain(record.disk).catch(() => [] as string[])) files.set(file, [...(files.get(file) ?? []), name]);
    }
    return files;
  }

  private async commitLocked(vm_id: string, snapshot_id: string, options: CommitOptions): Promise<SnapshotInfo> {
    const live = await this.requireLive(vm_id);
    const { qmp, agent, layout, state } = live;
    let { record } = live;
    if (await this.snapshots.read(snapshot_id)) throw new Error(`snapshot ${snapshot_id} already exists`);
    const { status } = await qmp.execute<{ status: string }>('query-status');
    if (status === 'postmigrate') {
      // Captured by an earlier commit and not run since: that snapshot holds exactly this state.
      const captured = record.captured ? await this.snapshots.read(record.captured.snapshot_id) : null;
      if (captured) return this.copySnapshot(captured, snapshot_id);
      // A commit that crashed before recording its capture: take the disks back the only way
      // QEMU 7.2 has (the guest runs for the few milliseconds between the two commands).
      this.log(`qemu: ${vm_id} was left captured by an unrecorded commit; reactivating its disks`);
      await qmp.execute('cont');
      await qmp.execute('stop');
      ({ record } = await this.requireLive(vm_id));
    }
    const snapshotDir = this.snapshots.dir(snapshot_id);
    await rm(snapshotDir, { recursive: true, force: true }); // an unfinished capture of a crashed worker
    await mkdir(snapshotDir, { recursive: true });
    const wasRunning = state === 'running';
    const staysPaused = !wasRunning || options.keep_paused === true;
    const frozenLayer = record.disk;
    const newTop = layout.layerPath(record.next_layer);
    const snapshotDisk = this.snapshots.diskPath(snapshot_id);
    // The new top names the snapshot's published layer as its backing file from the start (the
    // layer is linked there below), so no header ever points into a machine directory.
    await createOverlayOnFuture(newTop, snapshotDisk, record.fs_size_mib);
    let frozen = false;
    let stopped = false;
    let layered = false;
    try {
      await qmp.execute('migrate-set-parameters', { 'max-bandwidth': MIGRATION_BANDWIDTH });
      if (wasRunning) {
        await agent.request('guest-fsfreeze-freeze');
        frozen = true;
        await qmp.execute('stop');
        stopped = true;
      }
      await qmp.execute('blockdev-snapshot-sync', { device: DISK_DEVICE, 'snapshot-file': newTop, format: 'qcow2', mode: 'existing' });
      layered = true;
      await layout.writeRecord({ ...record, disk: newTop, next_layer: record.next_layer + 1 });
      await qmp.execute('migrate', { uri: `exec:cat > ${shellQuote(this.snapshots.memoryPath(snapshot_id))}` });
      await waitForMigration(qmp);
      // Migration leaves the disks inactive, and only `cont` re-activates them (QEMU 7.2): a
      // machine that stays paused is left so until resume.
      if (!staysPaused) {
        await qmp.execute('cont');
        stopped = false;
        await agent.request('guest-fsfreeze-thaw');
        frozen = false;
      }
    } catch (error) {
      if (stopped) await qmp.execute('cont').catch(() => undefined);
      if (frozen) await agent.request('guest-fsfreeze-thaw', undefined, 10_000).catch(() => undefined);
      if (layered) {
        // The machine already runs on the new top, whose backing file is the snapshot's layer:
        // keep that layer (retired, no snapshot) so the chain stays whole.
        await link(frozenLayer, snapshotDisk).catch(() => copyFile(frozenLayer, snapshotDisk));
        await this.snapshots.retire(snapshot_id);
        await layout.writeRecord({ ...record, disk: newTop, next_layer: record.next_layer + 1, depth: record.depth + 1 });
      } else {
        await rm(snapshotDir, { recursive: true, force: true });
        await rm(newTop, { force: true });
      }
      throw error;
    }

    // The frozen layer is immutable from now on: publish it under the snapshot without moving the
    // file QEMU has open (a hard link), or as a flattened copy when the chain got too long.
    const image = await ensureQemuBaseImage(this.options.cacheDir, this.log);
    let depth = record.depth + 1;
    if (depth > MAX_CHAIN_DEPTH) {
      await flattenOnto(frozenLayer, image.disk, snapshotDisk);
      depth = 1;
    } else {
      await linkOrCopy(frozenLayer, snapshotDisk);
    }
    const info: SnapshotInfo = {
      snapshot_id,
      source_vm_id: vm_id,
      includes_memory: true,
      vcpu_count: record.vcpu_count,
      mem_size_mib: record.mem_size_mib,
      fs_size_mib: record.fs_size_mib,
      created_at: new Date().toISOString(),
    };
    const snapshot: QemuSnapshotRecord = { info, accel: record.accel, env: record.env, depth, frozen: wasRunning };
    await this.snapshots.write(snapshot);
    const captured = staysPaused ? { snapshot_id, frozen: wasRunning } : undefined;
    await layout.writeRecord({ ...record, disk: newTop, next_layer: record.next_layer + 1, depth, captured });
    this.log(`qemu: ${vm_id} committed to ${snapshot_id} (chain depth ${depth}${staysPaused ? ', left paused' : ''})`);
    return info;
  }

  /** A second snapshot of the same captured state: the first one's immutable files, linked. */
  private async copySnapshot(source: QemuSnapshotRecord, snapshot_id: string): Promise<SnapshotInfo> {
    const from = source.info.snapshot_id;
    const dir = this.snapshots.dir(snapshot_id);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await linkOrCopy(this.snapshots.diskPath(from), this.snapshots.diskPath(snapshot_id));
    await linkOrCopy(this.snapshots.memoryPath(from), this.snapshots.memoryPath(snapshot_id));
    const info: SnapshotInfo = { ...source.info, snapshot_id, created_at: new Date().toISOString() };
    await this.snapshots.write({ ...source, info });
    this.log(`qemu: ${source.info.source_vm_id} committed to ${snapshot_id} (unchanged since ${from})`);
    return info;
  }

  private async claimMachineDir(vm_id: string): Promise<QemuMachineLayout> {
    const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
    await mkdir(this.options.stateDir, { recursive: true });
    try {
      await mkdir(layout.dir); // fails if the machine exists: creation is never a silent overwrite
    } catch (error: any) {
      if (error.code === 'EEXIST') throw new Error(`machine ${vm_id} already exists on this host`);
      throw error;
    }
    return layout;
  }

  private async launch(
    layout: QemuMachineLayout,
    image: QemuBaseImage,
    machine: Omit<QemuMachineRecord, 'process'>,
    incoming = false,
  ): Promise<QemuMachineRecord> {
    const args = qemuArguments({
      name: `arbor-${machine.vm_id}`,
      accel: machine.accel,
      vcpus: machine.vcpu_count,
      memMib: machine.mem_size_mib,
      image,
      disk: machine.disk,
      qmpSocket: layout.qmpSocket,
      agentSocket: layout.agentSocket,
      serialLog: layout.serialLog,
      incoming,
    });
    const qemu = await launchQemu(args, layout.qemuLog, layout.qmpSocket);
    const record: QemuMachineRecord = { ...machine, process: qemu.identity };
    await layout.writeRecord(record);
    this.attachments.set(machine.vm_id, { qmp: null, agent: new GuestAgentClient(layout.agentSocket), process: qemu });
    return record;
  }

  private attachment(layout: QemuMachineLayout): Attachment {
    let attachment = this.attachments.get(layout.vmId);
    if (!attachment) {
      attachment = { qmp: null, agent: new GuestAgentClient(layout.agentSocket) };
      this.attachments.set(layout.vmId, attachment);
    }
    return attachment;
  }

  private async qmp(layout: QemuMachineLayout): Promise<QmpClient> {
    const attachment = this.attachment(layout);
    const current = attachment.qmp ? await attachment.qmp.catch(() => null) : null;
    if (current && !current.closed) return current;
    attachment.qmp = QmpClient.connect(layout.qmpSocket);
    return attachment.qmp;
  }

  private async requireLive(vm_id: string) {
    const state = await this.status(vm_id);
    if (state === null) throw new MachineNotFoundError(vm_id);
    if (state === 'dead') throw new MachineStateError(vm_id, `machine ${vm_id} is dead`);
    const layout = new QemuMachineLayout(this.options.stateDir, vm_id);
    const record = (await layout.readRecord())!;
    return { state, layout, record, qmp: await this.qmp(layout), agent: this.attachment(layout).agent };
  }

  private async requireRunning(vm_id: string) {
    // A commit or resize in progress pauses the machine briefly: wait for it rather than refuse.
    await this.locks.idle(vm_id);
    const live = await this.requireLive(vm_id);
    if (live.state !== 'running') throw new MachineStateError(vm_id, `machine ${vm_id} is ${live.state}`);
    return live;
  }

  /** The accelerator machines get; `image` null: not built yet (built only if a KVM boot probe needs it). */
  private async accel(image: QemuBaseImage | null): Promise<AccelChoice> {
    if (this.options.accel === 'tcg') return { accel: 'tcg', reason: 'TCG (configured)' };
    const needImage = async () => {
      if (image) return image;
      this.log('qemu: KVM may work here (/dev/kvm opens, the CPU has vmx/svm); building the base image to boot a probe VM');
      return ensureQemuBaseImage(this.options.cacheDir, this.log);
    };
    this.accelChoice ??= chooseAccel(needImage, this.options.cacheDir, join(this.options.stateDir, '.probe'));
    const choice = await this.accelChoice.catch((error) => {
      this.accelChoice = null; // e.g. the image build failed: let a later call try again
      throw error;
    });
    if (this.options.accel === 'kvm' && choice.accel !== 'kvm') throw new Error(`KVM configured but unusable: ${choice.reason}`);
    return choice;
  }
}

async function missingTools(tools: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const tool of tools) {
    if (!(await runCommand('sh', ['-c', 'command -v "$1"', 'sh', tool]).catch(() => ''))) missing.push(tool);
  }
  return missing;
}

/** A hard link (the file stays where QEMU or a snapshot has it open), or a copy across file systems. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  await link(from, to).catch(async (error) => {
    if (error.code !== 'EXDEV') throw error;
    await copyFile(from, to);
  });
}

function shellQuote(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

async function waitForMigration(qmp: QmpClient): Promise<void> {
  for (;;) {
    const { status, 'error-desc': errorDesc } = await qmp.execute<{ status?: string; 'error-desc'?: string }>('query-migrate');
    if (status === 'completed') return;
    if (status === 'failed' || status === 'cancelled') throw new Error(`memory snapshot failed: ${errorDesc ?? status}`);
    await sleep(10);
  }
}

async function waitWhileStatus(qmp: QmpClient, transient: string, record: QemuMachineRecord): Promise<void> {
  for (;;) {
    const { status } = await qmp.execute<{ status: string }>('query-status');
    if (status !== transient) return;
    if (!(await isAlive(record.process))) throw new Error('QEMU exited while restoring the memory snapshot');
    await sleep(10);
  }
}

export type { QemuAccel };
