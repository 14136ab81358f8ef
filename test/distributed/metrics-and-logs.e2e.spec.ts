import { randomUUID } from 'node:crypto';
import { pollUntil } from '../support/poll-until';
import { type ProcessTrio, type RunningProcess, startProcessTrio } from '../support/processes';
import { type Scrape, scrapeMetrics } from '../support/prometheus-scrape';

/** The JSON lines a process wrote (the admin key announcement of a first start is not a log line). */
function logLines(process: RunningProcess): Record<string, any>[] {
  return process
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/** The port a projector or worker serves /metrics on, as it logged it (ARBOR_METRICS_PORT=0: any free port). */
function metricsUrl(process: RunningProcess): string {
  const line = logLines(process).find((entry) => /^metrics: serving \/metrics on port \d+$/.test(entry.msg));
  if (!line) throw new Error(`no metrics port logged:\n${process.output()}`);
  return `http://127.0.0.1:${/\d+$/.exec(line.msg)![0]}/metrics`;
}

/**
 * Metrics and logs of the distributed shape: api, projector and vm-worker as three processes on
 * the sandbox driver, the projector and the worker serving /metrics on ports of their own. Each
 * process's series move with a workload, and one correlation id ties the api's lines about a
 * request to the worker's lines (the driver's included) about the events it caused.
 */
describe('metrics and logs of separate processes (api, projector, vm-worker)', () => {
  let trio: ProcessTrio;

  beforeAll(async () => {
    trio = await startProcessTrio({ env: { ARBOR_METRICS_PORT: '0', ARBOR_LOG_LEVEL: 'debug' }, dataDirs: 'shared' });
  }, 320_000);
  afterAll(async () => {
    await trio?.stop();
  });

  it("serves each process's own series, which move with a workload; lag returns to 0", async () => {
    const worker = () => scrapeMetrics(metricsUrl(trio.worker));
    const projector = () => scrapeMetrics(metricsUrl(trio.projector));
    const api = () => scrapeMetrics(`${trio.apiUrl}/metrics`);
    const [workerBefore, apiBefore] = [await worker(), await api()];

    const created = await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    expect(created.status).toBe(201);
    const vm: string = created.json.vm_id;
    expect((await trio.call('POST', `/api/v1/vm/${vm}/exec`, { command: ['true'] })).status).toBe(200);
    expect((await trio.call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);

    // Each follower catches up: lag 0 in positions and seconds.
    let workerAfter: Scrape | undefined;
    let projectorAfter: Scrape | undefined;
    await pollUntil(async () => {
      [workerAfter, projectorAfter] = [await worker(), await projector()];
      const atHead = (scrape: Scrape, follower: string) => scrape.matching('arbor_follower_lag_positions', { follower }).length === 1 && scrape.value('arbor_follower_lag_positions', { follower }) === 0 && scrape.value('arbor_follower_lag_seconds', { follower }) === 0;
      return atHead(workerAfter, 'worker') && atHead(projectorAfter, 'projector');
    });
    // A process reports only its own followers.
    expect(workerAfter!.matching('arbor_follower_lag_positions', { follower: 'projector' })).toEqual([]);

    // The worker: the driver calls it made, and the events it appended (the api appended the intents).
    const driverCalls = (operation: string) => workerAfter!.value('arbor_driver_operation_duration_seconds_count', { driver: 'sandbox', operation, result: 'ok' }) - workerBefore.value('arbor_driver_operation_duration_seconds_count', { driver: 'sandbox', operation, result: 'ok' });
    expect({ create: driverCalls('create') >= 1, exec: driverCalls('exec') >= 1, destroy: driverCalls('destroy') >= 1 }).toEqual({ create: true, exec: true, destroy: true });
    const workerAppended = (type: string) => workerAfter!.value('arbor_events_appended_total', { type }) - workerBefore.value('arbor_events_appended_total', { type });
    expect([workerAppended('VmBooted'), workerAppended('VmDeleted'), workerAppended('VmCreationRequested')]).toEqual([1, 1, 0]);

    // The api: its requests by route template, its appends, and VMs by state.
    const apiAfter = await api();
    const apiAppended = (type: string) => apiAfter.value('arbor_events_appended_total', { type }) - apiBefore.value('arbor_events_appended_total', { type });
    expect([apiAppended('VmCreationRequested'), apiAppended('VmDeletionRequested'), apiAppended('VmBooted')]).toEqual([1, 1, 0]);
    const requests = (labels: Record<string, string>) => apiAfter.value('arbor_http_requests_total', labels) - apiBefore.value('arbor_http_requests_total', labels);
    expect(requests({ method: 'POST', route: '/api/v1/vm/new_root', status: '201' })).toBe(1);
    expect(requests({ method: 'DELETE', route: '/api/v1/vm/:vm_id', status: '200' })).toBe(1);
    expect(apiAfter.matching('arbor_vms', { state: 'running' })).toEqual([expect.objectContaining({ value: 0 })]);
    expect(projectorAfter!.matching('process_cpu_seconds_total')).toHaveLength(1);
  }, 180_000);

  it("ties the api's lines about a request to the worker's lines about the events it caused, by one correlation id", async () => {
    const correlation = randomUUID();
    const created = await trio.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: {} }, headers: { 'x-correlation-id': correlation } });
    expect(created.status).toBe(201);
    const vm: string = created.json.vm_id;
    try {
      await pollUntil(async () => logLines(trio.api).some((entry) => entry.correlation_id === correlation));
      expect(logLines(trio.api).filter((entry) => entry.correlation_id === correlation)).toEqual([
        expect.objectContaining({ app: 'api', component: 'http', level: 'info', method: 'POST', route: '/api/v1/vm/new_root', status: 201, path: '/api/v1/vm/new_root' }),
      ]);
      const workerLines = logLines(trio.worker).filter((entry) => entry.correlation_id === correlation);
      expect(workerLines).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ app: 'worker', component: 'worker', msg: `worker: creating ${vm} on sandbox` }),
          expect.objectContaining({ app: 'worker', component: 'hypervisor', msg: expect.stringMatching(new RegExp(`^sandbox: machine ${vm} running`)) }),
        ]),
      );
      // Every line of the three processes is one JSON object with its app, level, time and message.
      for (const process of [trio.api, trio.projector, trio.worker]) {
        for (const entry of logLines(process)) expect(entry).toEqual(expect.objectContaining({ app: expect.any(String), level: expect.any(String), time: expect.any(String), msg: expect.any(String) }));
      }
    } finally {
      expect((await trio.call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    }
  }, 180_000);
});
