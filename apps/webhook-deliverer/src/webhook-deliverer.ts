import { AggregateRepository, causedBy, FinishedPrefixQueue, type JsonStateFile, presentEvent, webhookRetryDelayMs, webhookSignatureHeaders, type WebhookSettings } from '@arbor/application';
import { WebhookDelivery } from '@arbor/domain';
import type { AllSubscription, EventStore, RecordedEvent } from '@arbor/event-store';
import { type Log, reportFollowerLag, silentLog, webhookAttempts, withLogContext } from '@arbor/observability';
import { delivererStateFile, type DelivererState } from './deliverer-state-file';
import { registryChange, WebhookRegistry, type WebhookTarget } from './webhook-registry';
import { sendWebhook, type SendWebhook, type WebhookResponse } from './webhook-sender';

export interface WebhookDelivererOptions {
  /** Where the deliverer keeps its checkpoint (run exactly one deliverer per installation). */
  stateFile: string;
  settings: WebhookSettings;
  /** Each webhook's signing secret (WebhookSecrets: derived, the same as the api's). */
  secrets: { secretOf(webhook_id: string): string };
  /** Requests in flight to one webhook at a time (default 4). */
  concurrencyPerWebhook?: number;
  /** Deliveries under way (sending, or waiting to be tried again) before no more events are taken from the log (default 10,000). */
  maxPendingDeliveries?: number;
  send?: SendWebhook;
  log?: Log;
}

/** A webhook's requests in flight, and whether it was deleted (its deliveries are then given up). */
class WebhookLane {
  readonly deleted = new AbortController();
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly concurrency: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** Where an event is, kept while its deliveries are under way (the event itself is read again). */
type EventPlace = Pick<RecordedEvent, 'id' | 'stream_id' | 'revision'>;

/** An event taken from the log: done once each of its deliveries has been recorded to its end. */
interface TakenEvent {
  position: number;
  finished: boolean;
  change: ((registry: WebhookRegistry) => void) | null;
}

/**
 * Delivers the log to webhooks: follows `$all` from a durable checkpoint and POSTs every event of
 * an org to each of the org's webhooks that wants its type, signed (Standard Webhooks), with the
 * feed's JSON of the event. Each delivery is recorded on its own stream
 * (`webhookdelivery-<webhook>-<event>`), attempt by attempt, and retried with exponential backoff
 * up to `settings.attempts` tries. Deliveries run in parallel: per webhook at most
 * `concurrencyPerWebhook` requests at once, so a slow webhook holds up no other, and a failed one
 * waits out its backoff without holding up its own later events (they are not ordered: receivers
 * order by `position` and de-duplicate by `event_id`).
 *
 * At least once: the checkpoint moves past an event only once each of its deliveries has ended
 * and is recorded; after a crash the events since are taken again, and each delivery carries on
 * from what its stream says (a delivery whose POST went out but whose outcome was not recorded is
 * sent again; one that had ended is not). A webhook's own events are never delivered.
 */
export class WebhookDeliverer {
  private readonly aggregates: AggregateRepository;
  private readonly stateFile: JsonStateFile<DelivererState>;
  private readonly send: SendWebhook;
  private readonly log: Log;
  /** The webhooks as of the last event taken, and as of the checkpoint (what a restart starts from). */
  private live = new WebhookRegistry();
  private saved = new WebhookRegistry();
  private position: number | null = null;
  private readonly taken = new FinishedPrefixQueue<TakenEvent>();
  private readonly lanes = new Map<string, WebhookLane>();
  private readonly deliveries = new Set<Promise<boolean>>();
  private readonly roomWaiters: (() => void)[] = [];
  private readonly stopping = new AbortController();
  private subscription: AllSubscription | null = null;
  private following: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventStore,
    private readonly options: WebhookDelivererOptions,
  ) {
    this.aggregates = new AggregateRepository(events);
    this.stateFile = delivererStateFile(options.stateFile);
    this.send = options.send ?? sendWebhook;
    this.log = (options.log ?? silentLog).child({ component: 'webhooks' });
  }

  async start(): Promise<void> {
    const saved = await this.stateFile.read();
    this.position = saved.position;
    this.saved = new WebhookRegistry(saved.webhooks);
    this.live = new WebhookRegistry(saved.webhooks);
    reportFollowerLag('webhooks', { events: this.events, checkpoint: () => this.position });
    this.log.info(`webhooks: ${saved.webhooks.length} webhook(s), following the log after ${this.position ?? 'start'}`);
    this.subscription = this.events.subscribeToAll(this.position === null ? {} : { after_position: this.position });
    this.following = this.follow(this.subscription);
    this.timer = setInterval(() => void this.saveCheckpoint(), 200);
  }

  /** Stops taking events and sending; what is not recorded yet is done again by the next start. */
  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    if (this.timer) clearInterval(this.timer);
    this.roomWaiters.splice(0).forEach((wake) => wake());
    await this.subscription?.unsubscribe();
    await this.following;
    await Promise.allSettled([...this.deliveries]);
    await this.saveCheckpoint();
  }

  /** Resolves once every event taken so far has been delivered or given up (for tests). */
  async idle(): Promise<void> {
    while (this.deliveries.size) await Promise.allSettled([...this.deliveries]);
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async follow(subscription: AllSubscription): Promise<void> {
    for await (const event of subscription) {
      await this.roomForMore();
      if (this.stopped) return;
      const change = registryChange(event);
      change?.(this.live);
      if (event.type === 'WebhookDeleted') this.closeLane(event);
      const entry: TakenEvent = { position: event.position, finished: false, change };
      this.taken.push(entry);
      const targets = this.live.targetsOf(event);
      let left = targets.length;
      entry.finished = left === 0;
      for (const target of targets) {
        // The delivery's log lines carry the correlation id of the event it delivers.
        const delivery = withLogContext({ correlation_id: event.metadata.correlation_id }, () => this.deliver(target, { id: event.id, stream_id: event.stream_id, revision: event.revision }));
        this.track(delivery).then((ended) => {
          if (ended && --left === 0) entry.finished = true;
        });
      }
    }
  }

  private track(delivery: Promise<boolean>): Promise<boolean> {
    this.deliveries.add(delivery);
    return delivery.finally(() => {
      this.deliveries.delete(delivery);
      this.roomWaiters.shift()?.();
    });
  }

  private async roomForMore(): Promise<void> {
    while (this.deliveries.size >= (this.options.maxPendingDeliveries ?? 10_000) && !this.stopped) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  private laneOf(webhook_id: string): WebhookLane {
    return this.lanes.get(webhook_id) ?? this.lanes.set(webhook_id, new WebhookLane(this.options.concurrencyPerWebhook ?? 4)).get(webhook_id)!;
  }

  /** A deleted webhook's deliveries end where they stand: nothing more is sent to it. */
  private closeLane(event: RecordedEvent): void {
    const { webhook_id } = event.data as { webhook_id: string };
    this.lanes.get(webhook_id)?.deleted.abort();
    this.lanes.delete(webhook_id);
  }

  /**
   * Carries one delivery to its end from where its stream says it stands: true once it is
   * recorded as delivered or failed (or its webhook is deleted); false when the deliverer stops
   * first. A store that cannot be read or written is tried again until it can: a delivery is
   * never dropped unrecorded. Only the event's place in the log is kept meanwhile; each attempt
   * reads the event again (a file's content chunk is half a megabyte).
   */
  private async deliver(target: WebhookTarget, { id: event_id, stream_id, revision }: EventPlace): Promise<boolean> {
    const lane = this.laneOf(target.webhook_id);
    const id = { webhook_id: target.webhook_id, event_id };
    const interrupts = [this.stopping.signal, lane.deleted.signal];
    for (let storeFailures = 0; ; ) {
      try {
        const { state } = await this.aggregates.load(WebhookDelivery, id);
        if (state.status === 'delivered' || state.status === 'failed') return true;
        if (state.next_attempt_at) await sleepUntil(Date.parse(state.next_attempt_at), interrupts);
        if (interrupts.some((signal) => signal.aborted)) return !this.stopped;
        const [event] = await this.events.readStream(stream_id, { from_revision: revision, max_count: 1 });
        const attempt = state.attempts + 1;
        // Timed when a slot is free and sent only if nothing interrupted the wait for it.
        const sent = await lane.run(async () => (interrupts.some((signal) => signal.aborted) ? null : { attempted_at: new Date().toISOString(), response: await this.post(target, event) }));
        if (!sent) return !this.stopped;
        if (this.stopped) return false; // cut short: not an answer of the receiver's
        const { attempted_at, response } = sent;
        const next_attempt_at = new Date(Date.now() + webhookRetryDelayMs(this.options.settings, attempt)).toISOString();
        const outcome = response.ok ? { succeeded: true, status_code: response.status_code, error: null } : { succeeded: false, status_code: response.status_code, error: response.error };
        const record = { type: 'RecordWebhookAttempt' as const, ...id, org_id: target.org_id, event_type: event.type, event_position: event.position, attempt, max_attempts: this.options.settings.attempts, ...outcome, attempted_at, next_attempt_at };
        const recorded = await this.aggregates.handle(WebhookDelivery, id, record, causedBy(event, 'webhook', target.webhook_id, 'attempt', String(attempt)));
        const gaveUp = recorded.events.some((e) => e.type === 'WebhookDeliveryFailed');
        if (recorded.events.length) webhookAttempts.inc({ result: response.ok ? 'delivered' : gaveUp ? 'failed' : 'retrying' });
        if (gaveUp) {
          this.log.warn(`webhooks: ${event.type} ${event_id} to webhook ${target.webhook_id} failed after ${attempt} attempt(s): ${outcome.error}`);
        }
        storeFailures = 0;
      } catch (error) {
        storeFailures++;
        this.log.warn(`webhooks: delivering ${event_id} to webhook ${target.webhook_id} hit a store error (tried again): ${(error as Error).message}`);
        await sleepUntil(Date.now() + Math.min(30_000, 100 * 2 ** storeFailures), [this.stopping.signal]);
        if (this.stopped) return false;
      }
    }
  }

  /** One attempt: the event as the feed shows it, signed with the webhook's secret, POSTed. */
  private post(target: WebhookTarget, event: RecordedEvent): Promise<WebhookResponse> {
    const body = JSON.stringify(presentEvent(event));
    const signature = webhookSignatureHeaders(this.options.secrets.secretOf(target.webhook_id), event.id, Math.floor(Date.now() / 1000), body);
    const headers = { 'content-type': 'application/json', 'user-agent': 'Arbor-Webhooks/1', ...signature };
    return this.send({ url: target.url, headers, body, timeoutMs: this.options.settings.timeoutMs, signal: this.stopping.signal, allowPrivate: this.options.settings.allowPrivate });
  }

  /** Moves the checkpoint past the longest prefix of taken events whose deliveries have all ended. */
  private saveCheckpoint(): Promise<void> {
    const finished = this.taken.takeFinished();
    for (const entry of finished) {
      entry.change?.(this.saved);
      this.position = entry.position;
    }
    if (!finished.length) return this.saving;
    const state = { position: this.position, webhooks: this.saved.all() };
    this.saving = this.saving
      .then(() => this.stateFile.write(state))
      .catch((error) => this.log.warn(`webhooks: saving the checkpoint failed (the next save tries again): ${(error as Error).message}`));
    return this.saving;
  }
}

/** Waits until `time`, or until one of `signals` aborts (listeners removed after: the signals live long). */
function sleepUntil(time: number, signals: AbortSignal[]): Promise<void> {
  const ms = time - Date.now();
  if (ms <= 0 || signals.some((signal) => signal.aborted)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signals.forEach((signal) => signal.removeEventListener('abort', done));
      resolve();
    };
    const timer = setTimeout(done, ms);
    signals.forEach((signal) => signal.addEventListener('abort', done, { once: true }));
  });
}
