import { InMemoryDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { report, spreadOf, timed } from './stats';

const VMS = 1000;
/** Creates timed once VMS exist: the figure is the cost of a create at that size, not on the way up. */
const TIMED_CREATES = 200;

/**
 * API latency of create/list/get with 1,000 VMs, over real HTTP on the embedded service. The
 * machines are in-memory so the figures are the control plane's own cost (the drivers have their
 * own benchmarks).
 */
export async function benchApiLatency(): Promise<void> {
  const bench = await startBenchArbor({}, new InMemoryDriver());
  const newRoot = (i: number) => bench.call('POST', '/api/v1/vm/new_root', { vm_config: { labels: { i: String(i) } } });
  try {
    const ids: string[] = [];
    for (let i = 0; i < VMS; i++) ids.push((await newRoot(i)).vm_id);
    const list: number[] = [];
    for (let i = 0; i < 100; i++) list.push((await timed(() => bench.call('GET', '/api/v1/vms')))[1]);
    const get: number[] = [];
    for (let i = 0; i < 1000; i++) get.push((await timed(() => bench.call('GET', `/api/v1/vm/${ids[(i * 7919) % ids.length]}/status`)))[1]);
    const create: number[] = [];
    for (let i = 0; i < TIMED_CREATES; i++) create.push((await timed(() => newRoot(VMS + i)))[1]);
    console.log(`API latency at ${VMS} VMs (embedded, real HTTP, in-memory machines)`);
    report([
      [`create (new_root, ${TIMED_CREATES} at ${VMS}+ VMs)`, spreadOf(create)],
      [`list (${VMS} VMs)`, spreadOf(list)],
      ['get (status)', spreadOf(get)],
    ]);
  } finally {
    await bench.stop();
  }
}
