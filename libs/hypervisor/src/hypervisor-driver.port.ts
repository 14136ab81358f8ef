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
  /** Written to /etc/environment at boot (KEY=VALUE lines, sorted by key). */
  env: Record<string, string>;
}

export interface MachineInfo {
  vm_id: string;
  state: MachineState;
  /** Host process that embodies the machine (init of the sandbox, the QEMU process), if any. */
  pid?: number;
}

export interface ExecSpec {
  argv: string[];
  env?: Record<string, string>;
  working_dir?: string;
  /** UTF-8 text fed to the process's stdin, then closed. */
  stdin?: string;
  /** 0 or absent: no timeout. On timeout the process is killed and the exit code is 124. */
  timeout_secs?: number;
}

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
}

export interface HypervisorDriver {
  readonly name: string;
  /** Whether the driver works on this host. Must be cheap to call twice. */
  probe(): Promise<DriverProbe>;
  /** Builds or checks the default base image (may take minutes the first time; logs progress). */
  prepare(): Promise<void>;
  /** Creates and starts a machine; resolves when it can run commands. Fails if vm_id exists. */
  create(spec: MachineSpec): Promise<MachineInfo>;
  /** Stops the machine and removes every process, mount, cgroup and file it owned. Idempotent. */
  destroy(vm_id: string): Promise<void>;
  pause(vm_id: string): Promise<void>;
  resume(vm_id: string): Promise<void>;
  /** The machine's state, or null when the host has no such machine. */
  status(vm_id: string): Promise<MachineState | null>;
  /** Every machine this driver has on the host (for reconciliation after a restart). */
  list(): Promise<MachineInfo[]>;
  /** Runs argv in the machine; chunks are delivered in order while it runs. */
  exec(vm_id: string, spec: ExecSpec, onChunk: (chunk: ExecChunk) => void): Promise<ExecResult>;
}

export class MachineNotFoundError extends Error {
  constructor(readonly vm_id: string) {
    super(`machine ${vm_id} not found on this host`);
    this.name = 'MachineNotFoundError';
  }
}

/** Nest injection token for the HypervisorDriver port. */
export const HYPERVISOR_DRIVER = Symbol('HYPERVISOR_DRIVER');
