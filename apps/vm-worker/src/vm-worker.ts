import { dirname } from 'node:path';
import { AggregateRepository, defaultWorkerConcurrency, FinishedPrefixQueue, EventSecrets, loadDeployConfig, loadImageSettings, loadResourceSettings, type DeployConfig, type ImageSettings, type ResourceSettings } from '@arbor/application';
import { aggregateOfStream, type AnyAggregate } from '@arbor/domain';
import type { AllSubscription, EventStore } from '@arbor/event-store';
import { Slots, type HypervisorDriver } from '@arbor/hypervisor';
import { type Log, reportFollowerLag, silentLog, withLogContext } from '@arbor/observability';
import { instrumentDriver } from './instrumented-driver';
import type { StreamReactor } from './stream-reactor';
import { createReactors } from './reactors';
import { VmPlacements } from './vm-placements';
import { WorkerStateFile } from './worker-state-file';

/** Entities a resync reacts to between two turns of the event loop. */
const RESYNC_SLICE = 16;
/**
 * How long a resync waits for a slice's reactions before it goes on to the next: a reaction that
 * takes longer (a boot, a long exec, a deploy waiting for its VM) runs on in its queue, and must
 * not hold up the look at every other entity (a machine that died unnoticed until it ends).
 */
const RESYNC_SLICE_WAIT_MS = 1_000;

export interface VmWorkerOptions {
  /** Where the worker keeps its checkpoint (one file per worker). */
  stateFile: string;
  /**
   * Names this worker in VM placements (ARBOR_WORKER_ID): one per hypervisor host, unique, and
   * stable across restarts, since VMs placed under a name are looked after by that name only.
   */
  workerId: string;
  /** How often every known entity is compared with the host again (level-triggered resync). */
  resyncIntervalMs?: number;
  /**
   * Opens the secrets the worker needs in clear (exec stdin and env, file contents, a new VM's env
   * vars) and seals those it writes (file contents read): the installation's key store.
   */
  secrets?: EventSecrets;
  log?: Log;
  /** Quotas, the exec output cap and the data disk's floor (default: the defaults of ARBOR_*). */
  resources?: ResourceSettings;
  /** Whose disk the floor is checked on, where deploys clone and image jobs work (default: the state file's directory). */
  dataDir?: string;
  /** Machine operations at once, on different VMs (ARBOR_WORKER_CONCURRENCY; default: defaultWorkerConcurrency()). */
  concurrency?: number;
  /** The git host deploys clone from and their bounds (default: the defaults of ARBOR_GIT_*, ARBOR_DEPLOY_*). */
  deploy?: DeployConfig;
  /** How base images are made (default: the defaults of ARBOR_IMAGE_*, uploads under the data directory). */
  images?: ImageSettings;
}

/**
 * Follows the log with a durable checkpoint and hands each event to the reactor owning its
 * stream. Entities react one at a time each (in log order) and in parallel across entities, the
 * reactions that work machines at most `concurrency` at once (Slots, as the drivers bound their boots); the checkpoint
 * only moves past an event once its reaction has finished, so a crash replays it (harmlessly:
 * reacting is idempotent).
 */
export class VmWorker {
  /** The reactor of each aggregate the worker acts on. */
  private readonly reactors: Map<AnyAggregate, StreamReactor>;
  private readonly workerId: string;
  private readonly stateFile: WorkerStateFile;
  private readonly log: Log;
  /** The driver as the worker calls it: each call timed on /metrics. */
  private readonly driver: HypervisorDriver;
  /** Streams that still need this host's attention (resynced periodically). */
  private readonly known = new Set<string>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Machine operations in flight (see StreamReactor.machineWork). */
  private readonly machines: Slots;
  /** Events taken from the log whose reaction may not have finished, in log order. */
  private readonly inFlight = new FinishedPrefixQueue<{ position: number; done: Promise<void>; finished: boolean }>();
  private position: number | null = null;
  private subscription: AllSubscription | null = null;
  private following: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];
  /** Checkpoint writes, one after the other. */
  private saving: Promise<void> = Promise.resolve();
  private stopped = false;
  private resyncing = false;

  constructor(
    private readonly events: EventStore,
    driver: HypervisorDriver,
    private readonly options: VmWorkerOptions,
  ) {
    this.log = (options.log ?? silentLog).child({ component: 'worker' });
    this.driver = instrumentDriver(driver);
    this.workerId = options.workerId;
    const aggregates = new AggregateRepository(events, options.secrets ?? EventSecrets.NONE);
    const dataDir = options.dataDir ?? dirname(options.stateFile);
    const bounds = { resources: options.resources ?? loadResourceSettings({}), dataDir, deploy: options.deploy ?? loadDeployConfig({}), images: options.images ?? loadImageSettings({}, dataDir) };
    const reactors = createReactors(aggregates, this.driver, new VmPlacements(aggregates, this.workerId), this.log, bounds);
    this.reactors = new Map(reactors.map((reactor) => [reactor.aggregate, reactor]));
    this.stateFile = new WorkerStateFile(options.stateFile);
    this.machines = new Slots(options.concurrency ?? defaultWorkerConcurrency());
  }

  async start(): Promise<void> {
    this.stopped = false; // started again after a stop
    const saved = await this.stateFile.read();
    this.position = saved.position;
    saved.streams.forEach((stream) => this.known.add(stream));
    // Reconcile on start: everything the log gave this host, and everything the host has.
    for (const reactor of this.reactors.values()) {
      for (const id of (await reactor.discover?.()) ?? []) this.known.add(reactor.aggregate.stream(id));
    }
    reportFollowerLag('worker', { events: this.events, checkpoint: () => this.position });
    this.log.info(
      `worker ${this.workerId}: ${this.driver.name} driver, ${this.machines.size} machine operation(s) at once, ` +
        `${this.known.size} known entit(ies), following the log after ${this.position ?? 'start'}`,
    );
    await Promise.all([...this.known].map((stream) => this.enqueue(stream)));
    this.subscription = this.events.subscribeToAll(this.position === null ? {} : { after_position: this.position });
    this.following = this.follow(this.subscription);
    this.timers.push(setInterval(() => void this.saveCheckpoint(), 200));
    const resync = this.options.resyncIntervalMs ?? 10_000;
    if (resync > 0) this.timers.push(setInterval(() => void this.resync(), resync));
  }

  /**
   * Reacts to every known entity again (level-triggered: it heals drift), a slice at a time with
   * a turn of the event loop between slices, so a process sharing the loop (the embedded api)
   * keeps answering while thousands of entities are looked at; one pass at a time. An entity
   * whose reaction is already queued is left to it.
   */
  private async resync(): Promise<void> {
    if (this.resyncing) return;
    this.resyncing = true;
    try {
      const streams = [...this.known];
      for (let i = 0; i < streams.length && !this.stopped; i += RESYNC_SLICE) {
        const slice = Promise.all(streams.slice(i, i + RESYNC_SLICE).map((stream) => (this.queues.has(stream) ? undefined : this.enqueue(stream))));
        let waited: NodeJS.Timeout | undefined;
        await Promise.race([slice, new Promise((resolve) => (waited = setTimeout(resolve, RESYNC_SLICE_WAIT_MS)))]);
        clearTimeout(waited);
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.resyncing = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.forEach(clearInterval);
    await this.subscription?.unsubscribe();
    await this.following;
    await Promise.allSettled([...this.queues.values()]);
    await this.saveCheckpoint();
  }

  /** Resolves when every event taken so far has been reacted to (for tests and benchmarks). */
  async idle(): Promise<void> {
    await Promise.allSettled(this.inFlight.pending().map((f) => f.done));
  }

  private async follow(subscription: AllSubscription): Promise<void> {
    for await (const event of subscription) {
      const streams = this.reactorOf(event.stream_id) ? [event.stream_id] : [];
      for (const reactor of this.reactors.values()) streams.push(...(reactor.relatedTo?.(event) ?? []).map((id) => reactor.aggregate.stream(id)));
      streams.forEach((stream) => this.known.add(stream));
      // The reactions' log lines (the driver's too) carry the correlation id of the event they answer.
      const reactions = withLogContext({ correlation_id: event.metadata.correlation_id }, () => Promise.all(streams.map((stream) => this.enqueue(stream))));
      this.track(event.position, reactions.then(() => {}));
    }
  }

  /** Runs a reaction for the stream's entity after any already queued for it. */
  private enqueue(stream: string): Promise<void> {
    const reactor = this.reactorOf(stream);
    if (!reactor) return Promise.resolve();
    const id = reactor.aggregate.idOf(stream)!;
    const previous = this.queues.get(stream) ?? Promise.resolve();
    // The slot is taken once the entity's turn has come: a reaction waiting behind its own entity holds none.
    const react = () => (reactor.machineWork ? this.machines.run(() => reactor.react(id)) : reactor.react(id));
    const next = previous.then(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          if (!(await react())) this.known.delete(stream);
          return;
        } catch (error) {
          this.log.warn(`worker: reacting to ${stream} failed (attempt ${attempt}): ${(error as Error).message}`);
          if (attempt >= 5 || this.stopped) return; // the periodic resync tries again
          await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        }
      }
    });
    this.queues.set(stream, next);
    void next.finally(() => {
      if (this.queues.get(stream) === next) this.queues.delete(stream);
    });
    return next;
  }

  private track(position: number, done: Promise<void>): void {
    const entry = { position, done, finished: false };
    void done.finally(() => (entry.finished = true));
    this.inFlight.push(entry);
  }

  private reactorOf(stream: string): StreamReactor | null {
    const aggregate = aggregateOfStream(stream);
    return (aggregate && this.reactors.get(aggregate)) ?? null;
  }

  /** Moves the checkpoint past the longest finished prefix of in-flight events. */
  private saveCheckpoint(): Promise<void> {
    const finished = this.inFlight.takeFinished();
    if (finished.length) this.position = finished[finished.length - 1].position;
    if (!finished.length && !this.stopped) return this.saving;
    const state = { position: this.position, streams: [...this.known] };
    this.saving = this.saving
      .then(() => this.stateFile.write(state))
      .catch((error) => this.log.warn(`worker: saving the checkpoint failed (the next save tries again): ${(error as Error).message}`));
    return this.saving;
  }
}
