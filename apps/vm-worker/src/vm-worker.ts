import type { AllSubscription, EventStore } from '../../../libs/event-store/src/event-store.port';
import type { HypervisorDriver } from '../../../libs/hypervisor/src/hypervisor-driver.port';
import { VmReconciler } from './vm-reconciler';
import { WorkerStateFile } from './worker-state-file';

export interface VmWorkerOptions {
  /** Where the worker keeps its checkpoint (one file per worker). */
  stateFile: string;
  /** How often every known VM is compared with the host again (level-triggered resync). */
  resyncIntervalMs?: number;
  log?: (line: string) => void;
}

/**
 * Follows the log with a durable checkpoint and turns VM intents into hypervisor work through
 * the reconciler. VMs are reconciled one at a time each (in log order) and in parallel across
 * VMs; the checkpoint only moves past an event once its reconcile has finished, so a crash
 * replays it (harmlessly: reconciling is idempotent).
 */
export class VmWorker {
  private readonly reconciler: VmReconciler;
  private readonly stateFile: WorkerStateFile;
  private readonly log: (line: string) => void;
  private readonly known = new Set<string>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Events taken from the log whose reconcile may not have finished, in log order. */
  private readonly inFlight: { position: number; done: Promise<void>; finished: boolean }[] = [];
  private position: number | null = null;
  private subscription: AllSubscription | null = null;
  private following: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(
    private readonly events: EventStore,
    private readonly driver: HypervisorDriver,
    private readonly options: VmWorkerOptions,
  ) {
    this.log = options.log ?? (() => {});
    this.reconciler = new VmReconciler(events, driver, this.log);
    this.stateFile = new WorkerStateFile(options.stateFile);
  }

  async start(): Promise<void> {
    const saved = this.stateFile.read();
    this.position = saved.position;
    saved.vm_ids.forEach((id) => this.known.add(id));
    // Reconcile on start: every VM the log gave this host, and every machine the host has.
    for (const machine of await this.driver.list()) this.known.add(machine.vm_id);
    this.log(`worker: ${this.driver.name} driver, ${this.known.size} known machine(s), following the log after ${this.position ?? 'start'}`);
    await Promise.all([...this.known].map((id) => this.enqueue(id)));
    this.subscription = this.events.subscribeToAll(this.position === null ? {} : { after_position: this.position });
    this.following = this.follow(this.subscription);
    this.timers.push(setInterval(() => void this.saveCheckpoint(), 200));
    const resync = this.options.resyncIntervalMs ?? 10_000;
    if (resync > 0) this.timers.push(setInterval(() => this.known.forEach((id) => void this.enqueue(id)), resync));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.forEach(clearInterval);
    await this.subscription?.unsubscribe();
    await this.following;
    await Promise.allSettled([...this.queues.values()]);
    await this.saveCheckpoint();
  }

  /** Resolves when every event up to `position` has been reconciled (for tests and benchmarks). */
  async idle(): Promise<void> {
    await Promise.allSettled(this.inFlight.map((f) => f.done));
  }

  private async follow(subscription: AllSubscription): Promise<void> {
    for await (const event of subscription) {
      if (!event.stream_id.startsWith('vm-')) {
        this.track(event.position, Promise.resolve());
        continue;
      }
      const vm_id = event.stream_id.slice(3);
      this.known.add(vm_id);
      this.track(event.position, this.enqueue(vm_id));
    }
  }

  /** Runs a reconcile of the VM after any already queued for it. */
  private enqueue(vm_id: string): Promise<void> {
    const previous = this.queues.get(vm_id) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (this.stopped && !this.known.has(vm_id)) return;
      for (let attempt = 1; ; attempt++) {
        try {
          const stillWanted = await this.reconciler.reconcile(vm_id);
          if (!stillWanted) this.known.delete(vm_id);
          return;
        } catch (error) {
          this.log(`worker: reconciling ${vm_id} failed (attempt ${attempt}): ${(error as Error).message}`);
          if (attempt >= 5 || this.stopped) return; // the periodic resync tries again
          await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        }
      }
    });
    this.queues.set(vm_id, next);
    void next.finally(() => {
      if (this.queues.get(vm_id) === next) this.queues.delete(vm_id);
    });
    return next;
  }

  private track(position: number, done: Promise<void>): void {
    const entry = { position, done, finished: false };
    void done.finally(() => (entry.finished = true));
    this.inFlight.push(entry);
  }

  /** Moves the checkpoint past the longest finished prefix of in-flight events. */
  private async saveCheckpoint(): Promise<void> {
    let advanced = false;
    while (this.inFlight.length && this.inFlight[0].finished) {
      this.position = this.inFlight.shift()!.position;
      advanced = true;
    }
    if (advanced || this.stopped) this.stateFile.write({ position: this.position, vm_ids: [...this.known] });
  }
}
