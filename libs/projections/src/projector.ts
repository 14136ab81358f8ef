import { PROJECTOR_CHECKPOINT, toDomainEvent, upcast } from '@arbor/application';
import { aggregateOfStream } from '@arbor/domain';
import type { AllSubscription, EventStore, RecordedEvent } from '@arbor/event-store';
import { type Log, reportFollowerLag, silentLog, withLogContext } from '@arbor/observability';
import type { ReadModelStore } from '@arbor/read-models';
import { BatchedUnits } from './batched-units';
import type { Projection } from './projections';

/** The most events the live projector commits as one unit when it is behind. */
const LIVE_BATCH_EVENTS = 256;
const NOTHING_WAITING = Symbol('nothing waiting');

/**
 * Follows the whole log from its checkpoint and keeps every read model. Each event's writes and
 * the checkpoint advance commit as one unit, and the store refuses a unit whose position is not
 * past the checkpoint: a crash at any point neither skips an event nor applies one twice.
 *
 * When it is behind, the events already at hand commit together (BatchedUnits: whole events, the
 * checkpoint of the last, one transaction and fsync); as soon as no event is waiting, what is held
 * commits, so a caught-up projector commits each event as it comes. It is the read models' only
 * writer (run exactly one).
 */
export class Projector {
  private subscription: AllSubscription | null = null;
  private running: Promise<void> | null = null;
  /** The last position applied (the checkpoint), for the lag on /metrics. */
  private applied: number | null = null;
  private readonly log: Log;

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly projections: Projection[],
    log: Log = silentLog,
  ) {
    this.log = log.child({ component: 'projector' });
  }

  async start(): Promise<void> {
    for (const projection of this.projections) {
      for (const index of projection.indexes ?? []) await this.readModels.ensureIndex(index.collection, index.keys);
    }
    const checkpoint = await this.readModels.getCheckpoint(PROJECTOR_CHECKPOINT);
    this.applied = checkpoint;
    reportFollowerLag('projector', { events: this.events, checkpoint: () => this.applied });
    this.log.info(`projector: following the log after position ${checkpoint ?? 'start'}`);
    this.subscription = this.events.subscribeToAll(checkpoint === null ? {} : { after_position: checkpoint });
    this.running = this.follow(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    await this.running;
    this.subscription = null;
    this.running = null;
  }

  /** Empties every read model and its checkpoint; the next start() replays the whole log. */
  async reset(): Promise<void> {
    await this.readModels.reset(
      this.projections.flatMap((p) => p.collections),
      [PROJECTOR_CHECKPOINT],
    );
  }

  /** Applies one event (exposed for rebuilds and tests). Returns false if it was already applied. */
  apply(event: RecordedEvent): Promise<boolean> {
    return this.applyTo(this.readModels, event);
  }

  private async applyTo(readModels: ReadModelStore, event: RecordedEvent): Promise<boolean> {
    const aggregate = aggregateOfStream(event.stream_id);
    const recorded = upcast(event);
    const domainEvent = toDomainEvent(recorded);
    const projections = this.projections.filter((p) => !p.aggregates || (aggregate !== null && p.aggregates.includes(aggregate)));
    const ops = (await Promise.all(projections.map((p) => p.project(domainEvent, recorded, readModels)))).flat();
    return readModels.commit(ops, { name: PROJECTOR_CHECKPOINT, position: event.position });
  }

  private async follow(subscription: AllSubscription): Promise<void> {
    const batch = new BatchedUnits(this.readModels, LIVE_BATCH_EVENTS);
    const events = subscription[Symbol.asyncIterator]();
    let taken = this.applied;
    for (;;) {
      const next = events.next();
      // A subscription with events at hand answers within this turn; otherwise commit what is held, then wait.
      let result = await Promise.race([next, new Promise<typeof NOTHING_WAITING>((resolve) => setImmediate(resolve, NOTHING_WAITING))]);
      if (result === NOTHING_WAITING) {
        await this.untilDone(`committing up to ${taken}`, () => batch.flush());
        this.applied = taken;
        result = await next;
      }
      if (result.done) break;
      const event = result.value;
      await withLogContext({ correlation_id: event.metadata.correlation_id }, () =>
        this.untilDone(`event ${event.type} at ${event.position}`, () => this.applyTo(batch, event)),
      );
      taken = event.position;
    }
    await this.untilDone(`committing up to ${taken}`, () => batch.flush());
    this.applied = taken;
  }

  /** Never skips an event: retries the step until it succeeds (a failed commit keeps what it held). */
  private async untilDone(what: string, step: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await step();
        return;
      } catch (error) {
        this.log.warn(`projector: ${what} failed (attempt ${attempt}): ${(error as Error).message}`);
        await new Promise((r) => setTimeout(r, Math.min(1000, 10 * 2 ** attempt)));
      }
    }
  }
}
