import type {
  DriverProbe,
  ExecChunk,
  ExecResult,
  ExecSpec,
  HypervisorDriver,
  MachineInfo,
  MachineSpec,
  MachineState,
} from '../hypervisor-driver.port';
import { MachineNotFoundError } from '../hypervisor-driver.port';

/**
 * Machines that exist only in memory, with every call recorded: for the worker's reconcile tests
 * (which assert the exact driver calls a sequence of events causes) and for benchmarks of the
 * control plane alone. Never selected by HYPERVISOR=auto. `failNext` makes the next call of an
 * operation throw.
 */
export class InMemoryDriver implements HypervisorDriver {
  readonly name = 'memory';
  readonly calls: string[] = [];
  readonly machines = new Map<string, MachineState>();
  private failures = new Map<string, string>();

  failNext(operation: 'create' | 'destroy' | 'pause' | 'resume', reason: string): void {
    this.failures.set(operation, reason);
  }

  async probe(): Promise<DriverProbe> {
    return { ok: true, reason: 'machines in memory only (tests and benchmarks)' };
  }

  async prepare(): Promise<void> {}

  async create(spec: MachineSpec): Promise<MachineInfo> {
    this.record('create', spec.vm_id);
    if (this.machines.has(spec.vm_id)) throw new Error(`machine ${spec.vm_id} exists`);
    this.machines.set(spec.vm_id, 'running');
    return { vm_id: spec.vm_id, state: 'running' };
  }

  async destroy(vm_id: string): Promise<void> {
    this.record('destroy', vm_id);
    this.machines.delete(vm_id);
  }

  async pause(vm_id: string): Promise<void> {
    this.record('pause', vm_id);
    this.require(vm_id);
    this.machines.set(vm_id, 'paused');
  }

  async resume(vm_id: string): Promise<void> {
    this.record('resume', vm_id);
    this.require(vm_id);
    this.machines.set(vm_id, 'running');
  }

  async status(vm_id: string): Promise<MachineState | null> {
    return this.machines.get(vm_id) ?? null;
  }

  async list(): Promise<MachineInfo[]> {
    return [...this.machines].map(([vm_id, state]) => ({ vm_id, state }));
  }

  async exec(vm_id: string, _spec: ExecSpec, _onChunk: (chunk: ExecChunk) => void): Promise<ExecResult> {
    this.record('exec', vm_id);
    this.require(vm_id);
    return { exit_code: 0 };
  }

  private record(operation: string, vm_id: string): void {
    this.calls.push(`${operation} ${vm_id}`);
    const failure = this.failures.get(operation);
    if (failure !== undefined) {
      this.failures.delete(operation);
      throw new Error(failure);
    }
  }

  private require(vm_id: string): void {
    if (!this.machines.has(vm_id)) throw new MachineNotFoundError(vm_id);
  }
}
