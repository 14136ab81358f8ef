import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';
import { followerLags } from './follower-lag';
import { vmCounts } from './vm-counts';

/**
 * Every series Arbor exposes on /metrics, in one place (README "Metrics" lists them). Labels are
 * bounded sets only: event and command types, aggregates, operations, route templates, statuses,
 * states. Never an id (of a VM, an org, a key, a request): each would be a series of its own.
 * The process's metrics live in prom-client's default registry, served by metricsText().
 */

/** From a millisecond to the five minutes a write may wait for the worker. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const eventsAppended = new Counter({
  name: 'arbor_events_appended_total',
  help: 'Events this process appended to the log, by event type',
  labelNames: ['type'] as const,
});

export const commandDuration = new Histogram({
  name: 'arbor_command_duration_seconds',
  help: 'Commands run on their aggregate (read, decide, append; AggregateRepository.handle), by aggregate, command type and result (ok, a domain error kind, or error)',
  labelNames: ['aggregate', 'command', 'result'] as const,
  buckets: LATENCY_BUCKETS,
});

export const operationDuration = new Histogram({
  name: 'arbor_operation_duration_seconds',
  help: "API operations from the command to its visible effect (Operations.run: the append, the worker's outcome, the read models), by aggregate, command type and result",
  labelNames: ['aggregate', 'command', 'result'] as const,
  buckets: LATENCY_BUCKETS,
});

export const intentDuration = new Histogram({
  name: 'arbor_intent_duration_seconds',
  help: "Waits of the api for an intent's outcome (Operations.settle: e.g. VmCreationRequested until VmBooted, then the read models): the worker's turnaround, by aggregate, intent event type and result",
  labelNames: ['aggregate', 'intent', 'result'] as const,
  buckets: LATENCY_BUCKETS,
});

export const driverOperationDuration = new Histogram({
  name: 'arbor_driver_operation_duration_seconds',
  help: 'Calls of the hypervisor driver port by the worker, by driver, operation and result (ok or error)',
  labelNames: ['driver', 'operation', 'result'] as const,
  buckets: LATENCY_BUCKETS,
});

export const httpRequests = new Counter({
  name: 'arbor_http_requests_total',
  help: 'HTTP requests answered, by method, route template (never the raw path) and status',
  labelNames: ['method', 'route', 'status'] as const,
});

export const httpRequestDuration = new Histogram({
  name: 'arbor_http_request_duration_seconds',
  help: 'HTTP request durations until the answer ended (streams last as long as they stream), by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
});

export const webhookAttempts = new Counter({
  name: 'arbor_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts recorded, by result: delivered, retrying (failed, tried again later) or failed (given up)',
  labelNames: ['result'] as const,
});

/**
 * Measured at each scrape (see follower-lag.ts); both gauges, collected together, share the
 * measurement in flight. None outlives its scrape: a later scrape measures again.
 */
let lagMeasurement: Promise<Awaited<ReturnType<typeof followerLags>>> | null = null;
async function measureLag(field: 'positions' | 'seconds', gauge: Gauge<'follower'>): Promise<void> {
  lagMeasurement ??= followerLags().finally(() => (lagMeasurement = null));
  const lags = await lagMeasurement;
  gauge.reset();
  for (const [follower, lag] of lags) gauge.set({ follower }, lag[field]);
}

export const followerLagPositions: Gauge<'follower'> = new Gauge({
  name: 'arbor_follower_lag_positions',
  help: 'How far a log follower is behind: the head of $all minus its checkpoint (events on SQLite, log positions on EventStoreDB), by follower (projector, worker, webhooks)',
  labelNames: ['follower'] as const,
  collect: () => measureLag('positions', followerLagPositions),
});

export const followerLagSeconds: Gauge<'follower'> = new Gauge({
  name: 'arbor_follower_lag_seconds',
  help: 'Age of the oldest event a log follower has not handled yet (0 when caught up), by follower',
  labelNames: ['follower'] as const,
  collect: () => measureLag('seconds', followerLagSeconds),
});

export const vmsByState: Gauge<'state'> = new Gauge({
  name: 'arbor_vms',
  help: 'VMs not deleted, by state, as the read models show them (every api process reports the same installation-wide figure)',
  labelNames: ['state'] as const,
  async collect() {
    const counts = await vmCounts();
    vmsByState.reset();
    for (const [state, count] of Object.entries(counts ?? {})) vmsByState.set({ state }, count);
  },
});

let defaultsCollected = false;

/** Adds Node's process metrics (CPU, memory, event loop delay, GC) under their standard names, once per process (by whatever serves /metrics). */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics();
}

/** What a GET /metrics answers: the content type and the text exposition of every metric of this process. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}
