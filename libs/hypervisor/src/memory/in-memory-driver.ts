import { randomBytes } from 'node:crypto';
import type {
  CommitOptions,
  DriverCapabilities,
  DriverProbe,
  ExecChunkHandler,
  ExecResult,
  ExecSpec,
  HypervisorDriver,
  ImageBuildProgress,
  ImageBuildSpec,
  ImageInfo,
  MachineAddresses,
  MachineInfo,
  MachineSpec,
  MachineState,
  ReadFileOptions,
  SnapshotInfo,
  SnapshotMachineSpec,
  WriteFileOptions,
} from '../hypervisor-driver.port';
import { readFileSync } from 'node:fs';
import { GuestFileError, ImageInUseError, ImageNotFoundError, MachineNotFoundError, MachineStateError, SnapshotNotFoundError } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from '../guest-environment';
import { isSafeId } from '../host/safe-id';
import { sleep } from '../host/sleep';
import { walkTree } from '../host/tree-size';
import { imageSizeMib } from '../images/image-size';

interface MemoryMachine {
  state: MachineState;
  files: Map<string, Buffer>;
  shape: Pick<MachineSpec, 'vcpu_count' | 'mem_size_mib' | 'fs_size_mib'>;
  snapshot_id: string | null;
  /** The built image it booted (its snapshots' machines hold it too). */
  image_id: string | null;
  addresses: MachineAddresses;
}

type Operation = 'create' | 'destroy' | 'pause' | 'resume' | 'commit' | 'start' | 'exec' | 'resize' | 'build';

/** What the memory driver keeps of a root filesystem: its small regular files, by absolute path. */
const IMAGE_FILE_MAX_BYTES = 64 * 1024;
const IMAGE_FILES_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Machines that exist only in memory (files included), with every call recorded: for the
 * worker's reconcile tests, which assert the exact driver calls a sequence of events causes, and
 * for benchmarks of the control plane alone. Never selected by HYPERVISOR=auto. `failNext` makes
 * a coming call of an operation throw; `slowDown` makes an operation take longer. exec runs nothing: it echoes argv to stdout, exit code 0.
 * Images are measured (their size follows imageSizeMib, as on the real drivers) but not kept: a
 * machine of one starts with no files of it.
 */
export class InMemoryDriver implements HypervisorDriver {
  readonly name = 'memory';
  readonly capabilities: DriverCapabilities = { memory_snapshots: false };
  readonly calls: string[] = [];
  private readonly machines = new Map<string, MemoryMachine>();
  private readonly snapshots = new Map<string, SnapshotInfo & { files: Map<string, Buffer>; image_id: string | null }>();
  private readonly images = new Map<string, ImageInfo & { files: Map<string, Buffer> }>();
  private readonly failures = new Map<Operation, { reason: string; skip: number }>();
  private readonly delays = new Map<Operation, number>();
  /** Machines so far: each gets the next addresses (never reused, as a real host hands them out). */
  private addressed = 0;

  /** Makes a coming call of an operation throw: the next one, or the one after `skip` more. */
  failNext(operation: Operation, reason: string, skip = 0): void {
    this.failures.set(operation, { reason, skip });
  }

  /** Makes every call of an operation take this long (to widen races in tests). */
  slowDown(operation: Operation, ms: number): void {
    this.delays.set(operation, ms);
  }

  /** Puts a machine on the "host" without a call, as if created before a crash. */
  adopt(vm_id: string, state: MachineState = 'running'): void {
    this.machines.set(vm_id, { state, files: new Map(), shape: { vcpu_count: 1, mem_size_mib: 512, fs_size_mib: 1024 }, snapshot_id: null, image_id: null, addresses: this.nextAddresses() });
  }

  /** Removes a machine without a call, as if the host lost it. */
  lose(vm_id: string): void {
    this.machines.delete(vm_id);
  }

  async probe(): Promise<DriverProbe> {
    return { ok: true, reason: 'machines in memory only (tests and benchmarks)' };
  }

  async prepare(): Promise<void> {}

  async create(spec: MachineSpec): Promise<MachineInfo> {
    await this.enter('create', spec.vm_id);
    if (this.machines.has(spec.vm_id)) throw new Error(`machine ${spec.vm_id} exists`);
    const image = spec.image_id ? this.images.get(spec.image_id) : null;
    if (spec.image_id && !image) throw new ImageNotFoundError(spec.image_id);
    const { vcpu_count, mem_size_mib } = spec;
    const fs_size_mib = Math.max(spec.fs_size_mib, image?.size_mib ?? 0);
    const addresses = this.nextAddresses();
    const files = new Map(image?.files ?? []);
    environmentFiles(spec.env).forEach((content, path) => files.set(path, content));
    this.machines.set(spec.vm_id, { state: 'running', files, shape: { vcpu_count, mem_size_mib, fs_size_mib }, snapshot_id: null, image_id: spec.image_id ?? null, addresses });
    return { vm_id: spec.vm_id, state: 'running', addresses };
  }

  async destroy(vm_id: string): Promise<void> {
    await this.enter('destroy', vm_id);
    this.machines.delete(vm_id);
  }

  async pause(vm_id: string): Promise<void> {
    await this.enter('pause', vm_id);
    this.machine(vm_id).state = 'paused';
  }

  async resume(vm_id: string): Promise<void> {
    await this.enter('resume', vm_id);
    this.machine(vm_id).state = 'running';
  }

  async status(vm_id: string): Promise<MachineState | null> {
    return this.machines.get(vm_id)?.state ?? null;
  }

  async list(): Promise<MachineInfo[]> {
    return [...this.machines].map(([vm_id, machine]) => ({ vm_id, state: machine.state }));
  }

  async addresses(vm_id: string): Promise<MachineAddresses | null> {
    return this.machines.get(vm_id)?.addresses ?? null;
  }

  async sweep(): Promise<void> {}

  /** Addresses of a documentation-style unique local /64 and a private /16, one machine after the other. */
  /**
   * A subnet of its own per driver: tests put these addresses on the host's loopback, and two
   * checkouts' tests (or two drivers of one test) must not both claim one.
   */
  private readonly subnet = randomBytes(2).toString('hex');

  private nextAddresses(): MachineAddresses {
    const n = ++this.addressed;
    const hex = n.toString(16).padStart(4, '0');
    return { ipv6: `fd00:a4b0:${this.subnet}::${n.toString(16)}`, ipv4: `10.213.${Math.floor(n / 256)}.${n % 256}`, mac: `02:a8:00:00:${hex.slice(0, 2)}:${hex.slice(2)}` };
  }

  async exec(vm_id: string, spec: ExecSpec, onChunk: ExecChunkHandler): Promise<ExecResult> {
    await this.enter('exec', vm_id);
    this.running(vm_id);
    onChunk({ stream: 'stdout', data: Buffer.from(spec.argv.join(' ') + '\n') });
    return { exit_code: 0 };
  }

  async readFile(vm_id: string, path: string, options: ReadFileOptions = {}): Promise<Buffer> {
    const content = this.running(vm_id).files.get(path);
    if (!content) throw new GuestFileError(path, 'not_found', `${path}: no such file`);
    if (options.max_bytes !== undefined && content.length > options.max_bytes) throw GuestFileError.tooLarge(path, options.max_bytes);
    return Buffer.from(content);
  }

  async writeFile(vm_id: string, path: string, content: Buffer, _options?: WriteFileOptions): Promise<void> {
    this.running(vm_id).files.set(path, Buffer.from(content));
  }

  async commit(vm_id: string, snapshot_id: string, options: CommitOptions = {}): Promise<SnapshotInfo> {
    await this.enter('commit', vm_id);
    const machine = this.machine(vm_id);
    if (this.snapshots.has(snapshot_id)) throw new Error(`snapshot ${snapshot_id} exists`);
    const size_bytes = [...machine.files.values()].reduce((sum, content) => sum + content.length, 0);
    const info: SnapshotInfo = { snapshot_id, source_vm_id: vm_id, includes_memory: false, ...machine.shape, created_at: new Date().toISOString(), size_bytes };
    this.snapshots.set(snapshot_id, { ...info, files: new Map(machine.files), image_id: machine.image_id });
    if (options.keep_paused) machine.state = 'paused';
    return info;
  }

  async startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec): Promise<MachineInfo> {
    await this.enter('start', spec.vm_id);
    const snapshot = this.snapshots.get(snapshot_id);
    if (!snapshot) throw new SnapshotNotFoundError(snapshot_id);
    if (this.machines.has(spec.vm_id)) throw new Error(`machine ${spec.vm_id} exists`);
    const files = new Map(snapshot.files);
    environmentFiles(spec.env).forEach((content, path) => files.set(path, content));
    const { vcpu_count, mem_size_mib, fs_size_mib } = snapshot;
    const addresses = this.nextAddresses();
    this.machines.set(spec.vm_id, { state: 'running', files, shape: { vcpu_count, mem_size_mib, fs_size_mib }, snapshot_id, image_id: snapshot.image_id, addresses });
    return { vm_id: spec.vm_id, state: 'running', addresses };
  }

  async resizeDisk(vm_id: string, fs_size_mib: number): Promise<void> {
    await this.enter('resize', vm_id);
    const machine = this.machine(vm_id);
    if (fs_size_mib <= machine.shape.fs_size_mib) throw new Error(`disk is already ${machine.shape.fs_size_mib} MiB; it can only grow`);
    machine.shape.fs_size_mib = fs_size_mib;
  }

  async getSnapshot(snapshot_id: string): Promise<SnapshotInfo | null> {
    const snapshot = this.snapshots.get(snapshot_id);
    if (!snapshot) return null;
    const { files: _files, image_id: _image, ...info } = snapshot;
    return info;
  }

  async listSnapshots(): Promise<SnapshotInfo[]> {
    return Promise.all([...this.snapshots.keys()].map(async (id) => (await this.getSnapshot(id))!));
  }

  async deleteSnapshot(snapshot_id: string): Promise<void> {
    if ([...this.machines.values()].some((m) => m.snapshot_id === snapshot_id)) throw new Error(`snapshot ${snapshot_id} is still used by a machine`);
    this.snapshots.delete(snapshot_id);
  }

  /**
   * Keeps the root filesystem's small regular files (so a machine of the image shows them to
   * readFile); its size is what they take plus the extra space. A built image is returned as is.
   */
  async buildImage(spec: ImageBuildSpec, onProgress?: ImageBuildProgress): Promise<ImageInfo> {
    await this.enter('build', spec.image_id);
    if (!isSafeId(spec.image_id)) throw new Error(`invalid image id ${JSON.stringify(spec.image_id)}`);
    const built = this.images.get(spec.image_id);
    if (built) return imageInfoOf(built);
    onProgress?.('configuring');
    const { files, bytes } = await collectFiles(spec.rootfs_dir);
    onProgress?.('creating_disk');
    const image = { image_id: spec.image_id, size_mib: imageSizeMib(bytes, spec.extra_size_mib), created_at: new Date().toISOString(), files };
    this.images.set(spec.image_id, image);
    return imageInfoOf(image);
  }

  async getImage(image_id: string): Promise<ImageInfo | null> {
    const image = this.images.get(image_id);
    return image ? imageInfoOf(image) : null;
  }

  async deleteImage(image_id: string): Promise<void> {
    const users = [
      ...[...this.machines].filter(([, machine]) => machine.image_id === image_id).map(([vm_id]) => vm_id),
      ...[...this.snapshots.values()].filter((snapshot) => snapshot.image_id === image_id).map((snapshot) => snapshot.snapshot_id),
    ];
    if (users.length > 0) throw new ImageInUseError(image_id, users);
    this.images.delete(image_id);
  }

  /** Every operation starts here: the call is recorded, then fails or is slowed if the test said so. */
  private async enter(operation: Operation, vm_id: string): Promise<void> {
    this.calls.push(`${operation} ${vm_id}`);
    const failure = this.failures.get(operation);
    if (failure !== undefined && failure.skip > 0) failure.skip -= 1;
    else if (failure !== undefined) {
      this.failures.delete(operation);
      throw new Error(failure.reason);
    }
    const ms = this.delays.get(operation);
    if (ms) await sleep(ms);
  }

  private machine(vm_id: string): MemoryMachine {
    const machine = this.machines.get(vm_id);
    if (!machine) throw new MachineNotFoundError(vm_id);
    return machine;
  }

  private running(vm_id: string): MemoryMachine {
    const machine = this.machine(vm_id);
    if (machine.state !== 'running') throw new MachineStateError(vm_id, `machine ${vm_id} is ${machine.state}`);
    return machine;
  }
}

function imageInfoOf({ image_id, size_mib, created_at }: ImageInfo): ImageInfo {
  return { image_id, size_mib, created_at };
}

/**
 * The root's small regular files (by guest path), read in one walk that also sizes the tree as
 * the real drivers size it (what it takes on disk, du's count).
 */
async function collectFiles(root: string): Promise<{ files: Map<string, Buffer>; bytes: number }> {
  const files = new Map<string, Buffer>();
  let bytes = 0;
  let kept = 0;
  await walkTree(root, (path, stats) => {
    bytes += stats.blocks * 512;
    if (stats.isFile() && stats.size <= IMAGE_FILE_MAX_BYTES && kept + stats.size <= IMAGE_FILES_MAX_BYTES) {
      files.set(path, readFileSync(root + path));
      kept += stats.size;
    }
  });
  return { files, bytes };
}

function environmentFiles(env: Record<string, string>): Map<string, Buffer> {
  return new Map([['/etc/environment', Buffer.from(formatEnvironmentFile(env))]]);
}
