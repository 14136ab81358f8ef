import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AggregateRepository, newCommandContext, Secrets, type CommandContext } from '@arbor/application';
import { Commit, Exec, execKey, GuestFile, Vm, VM_CONFIG_DEFAULTS, VmPlacement, type CommitCommand, type ExecCommand, type GuestFileCommand, type VmCommand } from '@arbor/domain';
import { InMemoryEventStore, type EventStore } from '@arbor/event-store';
import type { HypervisorDriver } from '@arbor/hypervisor';
import { execsRunningHereSettled } from '../exec-runner';
import { VmWorker, type VmWorkerOptions } from '../vm-worker';

/**
 * Workers on one in-memory log, each with its own driver and checkpoint, and the API's side of the
 * log as plain commands: for specs that assert the exact driver calls a sequence of events causes.
 */
export class WorkerTestBed {
  readonly store: EventStore = new InMemoryEventStore();
  private readonly dir = mkdtempSync(join(tmpdir(), 'arbor-worker-'));
  /** A key store of its own in the bed's directory: secrets are sealed in the log as the api seals them. */
  readonly secrets = new Secrets({ dataDir: this.dir, mongoUrl: null }, {});
  readonly aggregates = new AggregateRepository(this.store, this.secrets.events);
  private readonly running = new Map<string, VmWorker>();

  /** Starts (or restarts) the worker named `name` on `driver`; its checkpoint survives restarts. */
  async start(driver: HypervisorDriver, name = 'worker-1', options: Partial<VmWorkerOptions> = {}): Promise<VmWorker> {
    await this.stop(name);
    const worker = new VmWorker(this.store, driver, { stateFile: join(this.dir, `${name}.json`), resyncIntervalMs: 0, workerId: name, secrets: this.secrets.events, ...options });
    this.running.set(name, worker);
    await worker.start();
    return worker;
  }

  async stop(name = 'worker-1'): Promise<void> {
    await this.running.get(name)?.stop();
    this.running.delete(name);
  }

  /** Forgets a worker's checkpoint (as if its state file was lost). */
  forgetCheckpoint(name = 'worker-1'): void {
    rmSync(join(this.dir, `${name}.json`), { force: true });
  }

  async destroy(): Promise<void> {
    for (const name of [...this.running.keys()]) await this.stop(name);
    await this.secrets.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Lets the subscriptions deliver, then waits for every reaction they started, a few times over. */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await Promise.all([...this.running.values()].map((w) => w.idle()));
      await execsRunningHereSettled();
    }
  }

  vm(vm_id: string, command: VmCommand) {
    return this.aggregates.handle(Vm, vm_id, command, apiContext());
  }

  commit(commit_id: string, command: CommitCommand) {
    return this.aggregates.handle(Commit, commit_id, command, apiContext());
  }

  /** An exec of org-1 (its stream is `exec-org-1-<exec_id>`). */
  exec(exec_id: string, command: ExecCommand) {
    return this.aggregates.handle(Exec, execKey('org-1', exec_id), command, apiContext());
  }

  /** `context` lets a spec share one correlation id across an operation's commands. */
  guestFile(op_id: string, command: GuestFileCommand, context: CommandContext = apiContext()) {
    return this.aggregates.handle(GuestFile, op_id, command, context);
  }

  requestExec(exec_id: string, vm_id: string, argv: string[]) {
    return this.exec(exec_id, { type: 'RequestExec', exec_id, vm_id, org_id: 'org-1', command: argv, env: null, working_dir: null, stdin: null, timeout_secs: 0, now: new Date().toISOString() });
  }

  /** The worker a VM is placed on, as its placement stream says. */
  async placement(vm_id: string): Promise<string[]> {
    return (await this.store.readStream(VmPlacement.stream(vm_id))).map((e) => (e.data as { worker_id: string }).worker_id);
  }

  /**
   * What the API appends for new_root, or for from_commit (`from`: the commit and the VM it was
   * taken from) before it records the use.
   */
  requestVm(vm_id: string, from: { commit_id: string; source_vm_id: string } | null = null) {
    const now = new Date().toISOString();
    const lineage = { parent_commit_id: from?.commit_id ?? null, grandparent_vm_id: from?.source_vm_id ?? null };
    return this.vm(vm_id, { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: { A: '1' }, ip: 'fd00::1', ...lineage, now });
  }

  requestCommit(vm_id: string, commit_id: string, keep_paused = false) {
    return this.vm(vm_id, { type: 'RequestVmCommit', commit_id, name: 'c', description: null, keep_paused });
  }

  async types(stream: string): Promise<string[]> {
    return (await this.store.readStream(stream)).map((e) => e.type);
  }
}

/** The API's side: a request of org-1's key. */
const apiContext = () => newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
