import { InMemoryDriver } from '../libs/hypervisor/src/memory/in-memory-driver';
import { startBenchArbor } from './embedded-client';
import { formatMs, percentile, report, timed } from './stats';

const VMS = 1000;

/**
 * API latency of create/list/get with 1,000 VMs, over real HTTP on the embedded service. The
 * machines are in-memory so the figures are the control plane's own cost (the drivers have their
 * own benchmarks).
 */
export async function benchApiLatency(): Promise<void> {
  const bench = await startBenchArbor({}, new InMemoryDriver());
  try {
    const create: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < VMS; i++) {
      const [created, ms] = await timed(() => bench.call('POST', '/api/v1/vm/new_root', { vm_config: { labels: { i: String(i) } } }));
      create.push(ms);
      ids.push(created.vm_id);
    }
    const list: number[] = [];
    for (let i = 0; i < 100; i++) list.push((await timed(() => bench.call('GET', '/api/v1/vms')))[1]);
    const get: number[] = [];
    for (let i = 0; i < 1000; i++) get.push((await timed(() => bench.call('GET', `/api/v1/vm/${ids[(i * 7919) % ids.length]}/status`)))[1]);
    console.log(`API latency at ${VMS} VMs (embedded, real HTTP, in-memory machines)`);
    report([
      ['create (new_root) p50 / p99', `${formatMs(percentile(create, 50))} / ${formatMs(percentile(create, 99))}`],
      [`list (${VMS} VMs) p50 / p99`, `${formatMs(percentile(list, 50))} / ${formatMs(percentile(list, 99))}`],
      ['get (status) p50 / p99', `${formatMs(percentile(get, 50))} / ${formatMs(percentile(get, 99))}`],
    ]);
  } finally {
    await bench.stop();
  }
}
