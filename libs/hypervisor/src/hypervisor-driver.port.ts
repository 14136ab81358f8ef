/**
 * The hypervisor driver interface the vm-worker drives. One interface, several drivers (sandbox:
 * namespaces + copy-on-write layers; qemu: real virtual machines), one shared contract suite.
 *
 * Machines are named by the VM id the control plane gave them. Every operation is idempotent
 * where that makes sense (destroying a missing machine succeeds), so the worker may replay.
 */

export type MachineState = 'running' | 'paused' | 'dead';

export interface MachineSpec {
  vm_id: string;
  vcpu_count: number;
  mem_size_mib: number;
  fs_size_mib: number;
  /** Base image name; "default" is the driver's own base image. */
  image_name: string;
  /**
   * A custom image built on this host with buildImage: when set, the machine boots that image
   * instead of the built-in one (image_name then only names it). Its disk (fs_size_mib) is at
   * least the image's size_mib.
   */
  image_id?: string | null;
  /** Written to /etc/environment at boot (KEY=VALUE lines, sorted by key). */
  env: Record<string, string>;
  /** Given fresh to every new machine. */
  identity: MachineIdentity;
  /**
   * Machines of one network group may reach each other over the network; of different groups,
   * never (the control plane passes the VM's org).
   */
  network_group: string;
}

export interface MachineInfo {
  vm_id: string;
  state: MachineState;
  /** Host process that embodies the machine (init of the sandbox, the QEMU process), if any. */
  pid?: number;
  /** Its addresses (create and startFromSnapshot say; see addresses()). */
  addresses?: MachineAddresses | null;
}

/**
 * A machine's addresses on its host's network: each machine has a network of its own, a port of
 * a host bridge, reachable from the host (and from machines of its group) and nothing else.
 */
export interface MachineAddresses {
  /** Its IPv6 address (the contract's `ip`): what listens on `::` in the machine is reached there. */
  ipv6: string;
  /** Its IPv4 address, for connections out of the host (NATed to the host's address). */
  ipv4: string;
  mac: string;
}

export interface ExecSpec {
  argv: string[];
  env?: Record<string, string>;
  working_dir?: string;
  /** UTF-8 text fed to the process's stdin, then closed. */
  stdin?: string;
  /** 0 or absent: no timeout. On timeout the process is killed and the exit code is 124. */
  timeout_secs?: number;
  /**
   * Aborting stops the command and everything it started (killed), as a timeout does; exec then
   * stops delivering output and resolves once the command is gone, with exit code 137 (killed).
   */
  signal?: AbortSignal;
}

/**
 * Takes one chunk of a command's output. A returned promise asks the driver to read no more of
 * the command's output until it settles (backpressure: the command's writes then block).
 */
export type ExecChunkHandler = (chunk: ExecChunk) => unknown;

/** Whether what a handler returned asks to wait. */
export const isPending = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | null)?.then === 'function';

export interface ExecChunk {
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

export interface ExecResult {
  exit_code: number;
}

export interface DriverProbe {
  ok: boolean;
  /** Why the driver can or cannot run here (logged when HYPERVISOR=auto picks one). */
  reason: string;
  /**
   * false: it works, but only as a fallback that HYPERVISOR=auto should not pick when another
   * driver works (e.g. QEMU without hardware acceleration: seconds per boot). Default true.
   */
  recommended?: boolean;
}

export interface HypervisorDriver {
  readonly name: string;
  readonly capabilities: DriverCapabilities;
  /** Whether the driver works on this host. Must be cheap to call twice. */
  probe(): Promise<DriverProbe>;
  /** Builds or checks the default base image (may take minutes the first time; logs progress). */
  prepare(): Promise<void>;
  /** Lets go of the driver's connections; machines keep running (a restarted worker adopts them). */
  close?(): Promise<void>;
  /** Creates and starts a machine; resolves when it can run commands. Fails if vm_id exists. */
  create(spec: MachineSpec): Promise<MachineInfo>;
  /** Stops the machine and removes every process, mount, cgroup and file it owned. Idempotent. */
  destroy(vm_id: string): Promise<void>;
  /** Stops the machine's execution (idempotent); waits for a commit or resize in progress. */
  pause(vm_id: string): Promise<void>;
  /** Lets a paused machine run again (idempotent), with whatever was put off while it was paused. */
  resume(vm_id: string): Promise<void>;
  /**
   * The machine's state, or null when the host has no such machine. 'dead': its host process is
   * gone (killed, crashed); only destroy() is left to do, and it cleans up completely.
   */
  status(vm_id: string): Promise<MachineState | null>;
  /** Every machine this driver has on the host (for reconciliation after a restart). */
  list(): Promise<MachineInfo[]>;
  /**
   * The machine's addresses, or null when it has none (no such machine, or one from before
   * machines had networks). A new machine answers SSH on its IPv6 address by the time create or
   * startFromSnapshot resolves.
   */
  addresses(vm_id: string): Promise<MachineAddresses | null>;
  /**
   * Takes back what the driver's machines held on the host and no machine holds any more
   * (network ports, addresses, rules of machines that vanished without a destroy): a worker runs
   * it as it starts, before it adopts the machines it finds.
   */
  sweep(): Promise<void>;
  /**
   * Runs argv in the machine; chunks are delivered while it runs, in the order the process wrote
   * them across stdout and stderr: each write() is one chunk (see ordered-output.ts; a single
   * write() of more than 4 MiB fails in the process with ENOBUFS). It ends when the process exits:
   * output that processes it left running write later is not waited for. A paused or dead machine
   * rejects at once with MachineStateError. The output is the guest's and hostile: the driver
   * bounds what it buffers of it (a record longer than a write can be fails the exec).
   */
  exec(vm_id: string, spec: ExecSpec, onChunk: ExecChunkHandler): Promise<ExecResult>;
  /**
   * A whole guest file. GuestFileError when missing or not a regular file, and ('too_large') when
   * it holds more than options.max_bytes: then at most max_bytes + 1 bytes were read, so a sparse
   * 1 TiB file or an endless one costs no more than the cap.
   */
  readFile(vm_id: string, path: string, options?: ReadFileOptions): Promise<Buffer>;
  /** Creates or replaces a guest file. GuestFileError('parent_missing') without create_dirs. */
  writeFile(vm_id: string, path: string, content: Buffer, options?: WriteFileOptions): Promise<void>;
  /**
   * Captures the machine into the immutable snapshot `snapshot_id` (an error if that id exists).
   * A running machine is paused for the capture and resumed afterwards unless keep_paused; a
   * paused machine stays paused and does not run at all during the capture (nor does a running
   * one after its capture when keep_paused).
   */
  commit(vm_id: string, snapshot_id: string, options?: CommitOptions): Promise<SnapshotInfo>;
  /**
   * Starts a new machine from a snapshot, with a fresh identity. SnapshotNotFoundError if unknown.
   * A branch is no driver call of its own: the worker commits the source once, then starts each
   * child from that snapshot, every step recorded in the log.
   */
  startFromSnapshot(snapshot_id: string, spec: SnapshotMachineSpec): Promise<MachineInfo>;
  /**
   * Grows the machine's root filesystem to fs_size_mib (visible to df); never shrinks. A running
   * machine keeps running; a paused one stays paused (docs/api-behaviour.md#vm-lifecycle: resize
   * only resumes a machine that was running) and shows the new size to df once resumed.
   */
  resizeDisk(vm_id: string, fs_size_mib: number): Promise<void>;
  getSnapshot(snapshot_id: string): Promise<SnapshotInfo | null>;
  listSnapshots(): Promise<SnapshotInfo[]>;
  /** Removes a snapshot; refuses (with an error saying so) while a machine still depends on it. */
  deleteSnapshot(snapshot_id: string): Promise<void>;
  /**
   * Turns a root filesystem directory into an image machines of this host can boot (MachineSpec.
   * image_id), with Arbor's guest pieces (exec, init, SSH server, guest agent) brought alongside,
   * never taken from the image. Idempotent per image_id: a rebuild after a crash replaces a
   * half-built one; a completed one is returned as it is.
   */
  buildImage(spec: ImageBuildSpec, onProgress?: ImageBuildProgress): Promise<ImageInfo>;
  /** The built image, or null when this host has none of that id. */
  getImage(image_id: string): Promise<ImageInfo | null>;
  /** Removes an image; idempotent. ImageInUseError while a machine or snapshot on this host uses it. */
  deleteImage(image_id: string): Promise<void>;
}

/** What buildImage turns into an image. */
export interface ImageBuildSpec {
  /** A UUID chosen by the caller (the image aggregate's id). */
  image_id: string;
  /**
   * A host directory holding the unpacked root filesystem (owned by host root, numeric ids as in
   * the image). The driver may consume it (move it); the caller deletes whatever is left afterwards.
   */
  rootfs_dir: string;
  /** Free space the image's VMs get on top of the computed root filesystem size. */
  extra_size_mib: number;
}

export interface ImageInfo {
  image_id: string;
  /** The disk size a VM of it gets (at least). */
  size_mib: number;
  created_at: string;
}

export type ImageBuildProgress = (stage: 'configuring' | 'creating_disk' | 'creating_snapshot', detail?: string) => void;

/** Who a new machine is: given fresh on every create, start-from-snapshot and branch child. */
export interface MachineIdentity {
  /** The guest's hostname. */
  hostname: string;
  /** OpenSSH public key (one line) authorized for root: the public half of the VM's own key pair. */
  ssh_authorized_key: string | null;
}

export interface DriverCapabilities {
  /**
   * true: commit captures memory and CPU state too, so machines started from the snapshot (and
   * branches of a running machine) keep their running processes. false: the filesystem only;
   * machines started from it boot fresh processes.
   */
  memory_snapshots: boolean;
}

/** An immutable capture of a machine, stored by the driver under its id. */
export interface SnapshotInfo {
  snapshot_id: string;
  /** The machine it was taken from. */
  source_vm_id: string;
  /** Whether memory was captured (see DriverCapabilities.memory_snapshots). */
  includes_memory: boolean;
  /** The machine shape machines started from this snapshot get. */
  vcpu_count: number;
  mem_size_mib: number;
  fs_size_mib: number;
  created_at: string;
  /**
   * What the snapshot's own files take on the host's disk (allocated bytes, measured when it was
   * taken; layers it sits on count for their own snapshots). Absent for snapshots from before.
   */
  size_bytes?: number;
}

export interface CommitOptions {
  /** Leave the source machine paused after the capture (default: resume it if it was running). */
  keep_paused?: boolean;
}

export interface ReadFileOptions {
  /** The most bytes the caller takes; a larger file is refused with GuestFileError('too_large'). */
  max_bytes?: number;
}

export interface WriteFileOptions {
  /** Permission bits (default 0o644). */
  mode?: number;
  /** Create missing parent directories (default false: a missing parent is an error). */
  create_dirs?: boolean;
}

/** Spec of a machine started from a snapshot: its shape comes from the snapshot. */
export type SnapshotMachineSpec = Pick<MachineSpec, 'vm_id' | 'env' | 'identity' | 'network_group'>;

export class SnapshotNotFoundError extends Error {
  constructor(readonly snapshot_id: string) {
    super(`snapshot ${snapshot_id} not found on this host`);
    this.name = 'SnapshotNotFoundError';
  }
}

/** A guest file operation failed (missing file, missing parent dir, not a file, ...). */
export class GuestFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'not_found' | 'not_a_file' | 'parent_missing' | 'too_large' | 'other',
    message: string,
  ) {
    super(message);
    this.name = 'GuestFileError';
  }

  /** The file holds more than the reader's max_bytes (what was read stopped right past it). */
  static tooLarge(path: string, maxBytes: number): GuestFileError {
    return new GuestFileError(path, 'too_large', `${path} is larger than the limit of ${maxBytes} bytes`);
  }
}

/** The operation needs the machine in another state (e.g. exec or files on a paused machine). */
export class MachineStateError extends Error {
  constructor(
    readonly vm_id: string,
    message: string,
  ) {
    super(message);
    this.name = 'MachineStateError';
  }
}

/** deleteImage while a machine or a snapshot of this host still uses the image. */
export class ImageInUseError extends Error {
  constructor(
    readonly image_id: string,
    /** What uses it: machine and snapshot ids. */
    readonly users: string[],
  ) {
    super(`image ${image_id} is in use by ${users.join(', ')}`);
    this.name = 'ImageInUseError';
  }
}

/** create() with an image_id this host has not built (or that was deleted). */
export class ImageNotFoundError extends Error {
  constructor(readonly image_id: string) {
    super(`image ${image_id} not found on this host`);
    this.name = 'ImageNotFoundError';
  }
}

export class MachineNotFoundError extends Error {
  constructor(readonly vm_id: string) {
    super(`machine ${vm_id} not found on this host`);
    this.name = 'MachineNotFoundError';
  }
}

/** Nest injection token for the HypervisorDriver port. */
export const HYPERVISOR_DRIVER = Symbol('HYPERVISOR_DRIVER');
