import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext } from '@arbor/application';
import { EnvVars } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pollUntil } from '../support/poll-until';
import { type Scrape, scrapeMetrics } from '../support/prometheus-scrape';
import { WebhookReceiver } from '../support/webhook-receiver';

const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/**
 * GET /metrics of the embedded service (api, projector, worker and webhook deliverer in one
 * process, one registry), scraped over HTTP as Prometheus does, before and after a workload.
 */
describe('GET /metrics (embedded service, in-memory driver)', () => {
  let arbor: TestArbor;
  const scrape = () => scrapeMetrics(`${arbor.url}/metrics`);
  /** Every follower at the head of the log, as /metrics says. */
  const caughtUp = async (): Promise<Scrape> => {
    let now: Scrape | undefined;
    const atHead = (follower: string) =>
      now!.matching('arbor_follower_lag_positions', { follower }).length === 1 && now!.value('arbor_follower_lag_positions', { follower }) === 0 && now!.value('arbor_follower_lag_seconds', { follower }) === 0;
    await pollUntil(async () => {
      now = await scrape();
      return ['projector', 'worker', 'webhooks'].every(atHead);
    });
    return now!;
  };

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
  });
  afterAll(async () => {
    await arbor?.destroy();
  });

  it('counts the events of a workload by type, its requests by route template and status, its operations and the driver calls it made', async () => {
    await caughtUp();
    const head = await arbor.infra.eventStore.headPosition();
    const before = await scrape();

    const vm = await arbor.bootVm();
    expect((await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: ['echo', 'hi'] } })).status).toBe(200);
    expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Paused' } })).status).toBe(200);
    expect((await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Running' } })).status).toBe(200);
    expect((await arbor.request('GET', `/api/v1/vm/${randomUUID()}/status`)).status).toBe(404);
    const during = await scrape();
    expect(during.value('arbor_vms', { state: 'running' })).toBe(1);
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    const after = await caughtUp();

    // Appends by type: exactly the events the workload put in the log, type by type.
    const appended = await arbor.infra.eventStore.readAll({ after_position: head });
    const inLog = countBy(appended.map((event) => event.type));
    const counted = Object.fromEntries(
      after.matching('arbor_events_appended_total').map((s) => [s.labels.type, s.value - before.value('arbor_events_appended_total', { type: s.labels.type })]).filter(([, delta]) => delta !== 0),
    );
    expect(counted).toEqual(inLog);
    expect(inLog).toMatchObject({ VmCreationRequested: 1, VmBooted: 1, ExecRequested: 1, VmPaused: 1, VmResumed: 1, VmDeleted: 1 });

    // HTTP by route template and status, never the raw path.
    const requests = (labels: Record<string, string>) => delta(before, after, 'arbor_http_requests_total', labels);
    expect(requests({ method: 'POST', route: '/api/v1/vm/new_root', status: '201' })).toBe(1);
    expect(requests({ method: 'POST', route: '/api/v1/vm/:vm_id/exec', status: '200' })).toBe(1);
    expect(requests({ method: 'PATCH', route: '/api/v1/vm/:vm_id/state', status: '200' })).toBe(2);
    expect(requests({ method: 'GET', route: '/api/v1/vm/:vm_id/status', status: '404' })).toBe(1);
    expect(requests({ method: 'DELETE', route: '/api/v1/vm/:vm_id', status: '200' })).toBe(1);
    expect(delta(before, after, 'arbor_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/vm/new_root', status: '201' })).toBe(1);
    const labelValues = after.samples.filter((s) => s.name.startsWith('arbor_')).flatMap((s) => Object.values(s.labels));
    expect(labelValues.filter((value) => UUID_ANYWHERE.test(value))).toEqual([]);

    // Commands, operations (until the effect is visible) and waits for intents, by aggregate, type and result.
    expect(delta(before, after, 'arbor_command_duration_seconds_count', { aggregate: 'Vm', command: 'RequestVmCreation', result: 'ok' })).toBe(1);
    expect(delta(before, after, 'arbor_command_duration_seconds_count', { aggregate: 'Vm', command: 'RecordVmBooted', result: 'ok' })).toBe(1);
    expect(delta(before, after, 'arbor_operation_duration_seconds_count', { aggregate: 'Vm', command: 'RequestVmStateChange', result: 'ok' })).toBe(2);
    expect(delta(before, after, 'arbor_intent_duration_seconds_count', { aggregate: 'Vm', intent: 'VmCreationRequested', result: 'ok' })).toBe(1);
    expect(delta(before, after, 'arbor_intent_duration_seconds_count', { aggregate: 'Vm', intent: 'VmDeletionRequested', result: 'ok' })).toBe(1);

    // The driver calls the worker made, by operation.
    for (const operation of ['create', 'exec', 'pause', 'resume', 'destroy']) {
      const calls = delta(before, after, 'arbor_driver_operation_duration_seconds_count', { driver: 'memory', operation, result: 'ok' });
      expect({ operation, measured: calls >= 1 }).toEqual({ operation, measured: true });
    }
    expect(after.value('arbor_vms', { state: 'running' })).toBe(0);
    // Node's own process metrics are there too.
    expect(after.matching('nodejs_eventloop_lag_seconds')).toHaveLength(1);
  });

  it('shows the projector falling behind while it is stopped, in positions and seconds, and back at 0 once it has caught up', async () => {
    await caughtUp();
    await arbor.projector.stop();
    try {
      const aggregates = new AggregateRepository(arbor.infra.eventStore, arbor.infra.secrets.events);
      const context = newCommandContext({ org_id: 'org-metrics', actor_key_id: 'key-metrics' });
      for (const value of ['1', '2', '3']) {
        await aggregates.handle(EnvVars, 'key-metrics', { type: 'SetEnvVars', owner_id: 'key-metrics', vars: { N: value }, replace: false, now: new Date().toISOString() }, { ...context, command_id: randomUUID() });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      const behind = await scrape();
      expect(behind.value('arbor_follower_lag_positions', { follower: 'projector' })).toBe(3);
      expect(behind.value('arbor_follower_lag_seconds', { follower: 'projector' })).toBeGreaterThanOrEqual(0.05);
    } finally {
      await arbor.projector.start();
    }
    await caughtUp();
  });

  it('counts webhook delivery attempts by result', async () => {
    const quick = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_WEBHOOK_RETRY_BASE_MS: '50', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const receiver = await WebhookReceiver.start();
    receiver.answer = (n) => ({ status: n === 1 ? 500 : 200 });
    try {
      const attempts = async () => {
        const now = await scrapeMetrics(`${quick.url}/metrics`);
        return ['delivered', 'retrying', 'failed'].map((result) => now.value('arbor_webhook_delivery_attempts_total', { result }));
      };
      const before = await attempts();
      expect((await quick.request('POST', '/arbor/v1/webhooks', { body: { url: receiver.url, event_types: ['EnvVarsSet'] } })).status).toBe(201);
      expect((await quick.request('PUT', '/api/v1/env_vars', { body: { vars: { A: '1' } } })).status).toBe(200);
      await pollUntil(async () => receiver.received.some((delivery) => delivery.status === 200));
      await pollUntil(async () => (await attempts())[0] > before[0]);
      expect((await attempts()).map((count, i) => count - before[i])).toEqual([1, 1, 0]);
    } finally {
      await receiver.close();
      await quick.destroy();
    }
  });

  it('answers a scrape only with the token when ARBOR_METRICS_TOKEN is set', async () => {
    const guarded = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_METRICS_TOKEN: 'scrape-token-1' } });
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-2' } })).status).toBe(401);
      const allowed = await scrapeMetrics(`${guarded.url}/metrics`, { authorization: 'Bearer scrape-token-1' });
      expect(allowed.matching('arbor_follower_lag_positions', { follower: 'projector' })).toHaveLength(1);
    } finally {
      await guarded.destroy();
    }
  });
});

function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string>): number {
  return after.value(name, labels) - before.value(name, labels);
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
