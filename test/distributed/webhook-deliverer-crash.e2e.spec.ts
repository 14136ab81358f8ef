import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_DB, projectRoot, verifyWebhook } from '@arbor/application';
import { isDeliverableEventType } from '@arbor/domain';
import { type EventStore, SqliteEventStore } from '@arbor/event-store';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { apiClient } from '../support/api-client';
import { pollUntil } from '../support/poll-until';
import { distEntry, freePort, type RunningProcess, startProcess, stopProcess, waitForOutput } from '../support/processes';
import { WebhookReceiver } from '../support/webhook-receiver';

/** The deliverer's built entry point (`npm run start:webhooks`). */
function delivererEntry(): string {
  const entry = join(projectRoot(__dirname), 'dist', 'apps', 'webhook-deliverer', 'src', 'main.js');
  if (!existsSync(entry)) execFileSync('npm', ['run', 'build'], { cwd: projectRoot(__dirname), stdio: 'ignore' });
  return entry;
}

/**
 * The webhook deliverer as its own process beside an api and a projector (no worker: the events
 * are env vars, no machines), sharing the SQLite stores and the data directory (the webhooks'
 * server secret). It is killed with SIGKILL while a delivery is in flight, more events come while
 * it is down, and once restarted every event arrives: at least once, exactly once by event id.
 */
describe('webhook deliverer: kill -9 mid-delivery loses nothing', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let api: RunningProcess;
  let projector: RunningProcess;
  let deliverer: RunningProcess;
  let receiver: WebhookReceiver;
  let store: EventStore;
  let call: ReturnType<typeof apiClient>;

  const startDeliverer = async () => {
    deliverer = startProcess(delivererEntry(), env);
    await waitForOutput(deliverer, /webhooks: .* following the log after/);
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'arbor-webhooks-'));
    const port = await freePort();
    env = { ARBOR_DATA_DIR: dataDir, PORT: String(port), ARBOR_WEBHOOK_ATTEMPTS: '30', ARBOR_WEBHOOK_RETRY_BASE_MS: '100', ARBOR_WEBHOOK_TIMEOUT_MS: '5000', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' };
    api = startProcess(distEntry('api'), env);
    await waitForOutput(api, /listening on port/);
    projector = startProcess(distEntry('projector'), env);
    await waitForOutput(projector, /following the log/);
    await startDeliverer();
    receiver = await WebhookReceiver.start();
    store = SqliteEventStore.open(join(dataDir, EVENTS_DB));
    call = apiClient(`http://127.0.0.1:${port}`, readFileSync(join(dataDir, ADMIN_KEY_FILE), 'utf8').trim());
  }, 120_000);

  afterAll(async () => {
    await Promise.all([api, projector, deliverer].filter(Boolean).map((running) => stopProcess(running)));
    await receiver?.close();
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every event of the org arrives signed after the restart, the one in flight again, and the deliveries read back', async () => {
    // 500 for the first ten requests, then 200 after a pause; the 15th request kills the deliverer before it is answered.
    receiver.answer = (n) => (n <= 10 ? { status: 500 } : { status: 200, delayMs: 150 });
    let inFlightAtKill: string | null = null;
    receiver.onRequest = (delivery) => {
      if (delivery.n !== 15) return;
      inFlightAtKill = delivery.id;
      deliverer.child.kill('SIGKILL');
    };
    const created = await call('POST', '/arbor/v1/webhooks', { url: receiver.url, event_types: ['*'] });
    expect(created.status).toBe(201);
    const { webhook_id, secret } = created.json;
    const org_id = (await store.readStream(`webhook-${webhook_id}`))[0].metadata.org_id;
    const registeredAt = (await store.readStream(`webhook-${webhook_id}`))[0].position;

    for (let i = 0; i < 30; i++) expect((await call('PUT', '/api/v1/env_vars', { vars: { [`BEFORE_${i}`]: String(i) } })).status).toBe(200);
    await deliverer.exited;
    expect(deliverer.child.signalCode).toBe('SIGKILL');
    expect(inFlightAtKill).not.toBeNull();
    for (let i = 0; i < 10; i++) expect((await call('PUT', '/api/v1/env_vars', { vars: { WHILE_DOWN: String(i) } })).status).toBe(200);

    const killedPosition = (await store.readAll()).find((e) => e.id === inFlightAtKill)!.position;
    await startDeliverer();
    const resumedAfter = Number(/following the log after (-?\d+|start)/.exec(deliverer.output())![1].replace('start', '-1'));
    expect(resumedAfter).toBeLessThan(killedPosition); // the checkpoint never passed an unrecorded delivery

    const expected = (await store.readAll({ after_position: registeredAt })).filter((e) => e.metadata.org_id === org_id && isDeliverableEventType(e.type)).map((e) => e.id);
    expect(expected).toHaveLength(40);
    await pollUntil(async () => expected.every((id) => receiver.ids().has(id)), { timeoutMs: 60_000 });

    expect([...receiver.ids()].sort()).toEqual([...expected].sort());
    expect(receiver.received.filter((d) => d.id === inFlightAtKill).length).toBeGreaterThanOrEqual(2); // sent again: its outcome was never recorded
    for (const delivery of receiver.received) {
      const headers = { 'webhook-id': delivery.id, 'webhook-timestamp': delivery.timestamp, 'webhook-signature': delivery.signature };
      expect({ n: delivery.n, verified: verifyWebhook(secret, headers, delivery.body) }).toEqual({ n: delivery.n, verified: true });
    }

    await pollUntil(async () => {
      const { deliveries } = (await call('GET', `/arbor/v1/webhooks/${webhook_id}/deliveries?limit=500`)).json;
      return deliveries.length === expected.length && deliveries.every((d: { status: string }) => d.status === 'delivered');
    }, { timeoutMs: 30_000 });
    expect(deliverer.output()).not.toMatch(/failed after/); // no delivery was given up
  }, 180_000);
});
