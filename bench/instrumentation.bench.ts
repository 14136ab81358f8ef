import { Writable } from 'node:stream';
import { InMemoryDriver } from '@arbor/hypervisor';
import { commandDuration, createLog, timed as timedMetric, withLogContext } from '@arbor/observability';
import { instrumentDriver } from '../apps/vm-worker/src/instrumented-driver';
import { startBenchArbor } from './embedded-client';
import { formatMs, report, spreadOf, timed } from './stats';

/** A destination that takes every line and keeps none: what writing a log line costs, minus the terminal. */
const nowhere = () => new Writable({ write: (_chunk, _encoding, done) => done() });

/** Mean cost of one call of `work`, in ms, over `rounds` calls after a warm-up. */
async function perCall(rounds: number, work: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < 1000; i++) await work();
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await work();
  return Number(process.hrtime.bigint() - start) / 1e6 / rounds;
}

/**
 * What the metrics and logs cost: each instrument alone (the driver decorator with and without,
 * a timed command, a log line), then requests over real HTTP on the embedded service with its
 * log at info (JSON lines, one a request) and silent, and a scrape of /metrics at 1,000 VMs.
 */
export async function benchInstrumentation(): Promise<void> {
  const driver = new InMemoryDriver();
  await driver.create({ vm_id: 'bench', vcpu_count: 1, mem_size_mib: 128, fs_size_mib: 256, image_name: 'default', env: {}, identity: { hostname: 'bench', ssh_authorized_key: null }, network_group: 'bench' });
  const measured = instrumentDriver(driver);
  const bareStatus = await perCall(50_000, () => driver.status('bench'));
  const measuredStatus = await perCall(50_000, () => measured.status('bench'));
  const bareExec = await perCall(20_000, () => driver.exec('bench', { argv: ['true'] }, () => {}));
  const measuredExec = await perCall(20_000, () => measured.exec('bench', { argv: ['true'] }, () => {}));
  const command = await perCall(50_000, () => timedMetric(commandDuration, { aggregate: 'Vm', command: 'Bench' }, async () => undefined));
  const bare = await perCall(50_000, async () => undefined);
  const log = createLog({ level: 'info', format: 'json' }, nowhere());
  const line = await perCall(50_000, () => withLogContext({ correlation_id: '5f0c3a3e-4a4b-4c55-9d1e-0f3a6b2b7c11' }, () => log.info({ method: 'GET', route: '/api/v1/vm/:vm_id/status', status: 200 }, 'GET /api/v1/vm/x/status 200')));
  console.log('Instrumentation cost (metrics and logs)');
  report([
    ['driver status: bare / instrumented', `${formatMs(bareStatus)} / ${formatMs(measuredStatus)} (+${formatMs(measuredStatus - bareStatus)} a call)`],
    ['driver exec (in-memory): bare / instrumented', `${formatMs(bareExec)} / ${formatMs(measuredExec)} (+${formatMs(measuredExec - bareExec)} a call)`],
    ['a timed command (histogram), over a no-op', `+${formatMs(command - bare)}`],
    ['a log line (JSON, correlation id from the context)', formatMs(line)],
  ]);

  const rows: [string, string][] = [];
  for (const level of ['silent', 'info'] as const) {
    const bench = await startBenchArbor({}, new InMemoryDriver(), createLog({ level, format: 'json' }, nowhere()));
    try {
      const ids: string[] = [];
      const create: number[] = [];
      for (let i = 0; i < 300; i++) {
        const [answer, ms] = await timed(() => bench.call('POST', '/api/v1/vm/new_root', { vm_config: {} }));
        ids.push(answer.vm_id);
        if (i >= 100) create.push(ms);
      }
      const get: number[] = [];
      for (let i = 0; i < 2000; i++) get.push((await timed(() => bench.call('GET', `/api/v1/vm/${ids[i % ids.length]}/status`)))[1]);
      rows.push([`create (new_root), log ${level}`, spreadOf(create)], [`get (status), log ${level}`, spreadOf(get)]);
      if (level === 'info') {
        for (let i = ids.length; i < 1000; i++) await bench.call('POST', '/api/v1/vm/new_root', { vm_config: {} });
        const scrapes: number[] = [];
        for (let i = 0; i < 50; i++) scrapes.push((await timed(() => fetch(`${bench.arbor.url}/metrics`).then((r) => r.text())))[1]);
        rows.push(['GET /metrics at 1,000 VMs (VM counts, lag of 3 followers)', spreadOf(scrapes)]);
      }
    } finally {
      await bench.stop();
    }
  }
  console.log('  over real HTTP (embedded, in-memory machines; every request is measured either way):');
  report(rows.map(([name, value]) => [`  ${name}`, value]));
}
