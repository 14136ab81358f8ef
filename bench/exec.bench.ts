import type { HypervisorDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { execInOtherProcess } from './http-execs';
import { percentile, report, spreadOf, timed } from './stats';

/**
 * Exec through the log on a real driver: the sync round trip through the API (append the request,
 * the worker runs it and appends output and exit, the API follows the stream) against the same
 * command straight on the driver, and how soon a streamed exec's first output line arrives. The
 * HTTP client runs in a process of its own, as a user's does (until 2026-11-28 (night) it was a `fetch`
 * on the service's own event loop, which added its work to the API's figures).
 */
export async function benchExec(hypervisor: 'sandbox' | 'qemu' = 'sandbox', rounds = 50): Promise<void> {
  const bench = await startBenchArbor({ HYPERVISOR: hypervisor });
  try {
    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
    const driver = bench.arbor.driver;
    const command = ['echo', 'hello'];
    // Warm both paths once (first exec pays for caches and JIT).
    await driver.exec(vm_id, { argv: command }, () => {});
    await bench.call('POST', `/api/v1/vm/${vm_id}/exec`, { command });

    const direct: number[] = [];
    const api: number[] = [];
    const firstByte: number[] = [];
    const driverFirstByte: number[] = [];
    const client = { baseUrl: bench.arbor.url, key: bench.arbor.createdAdminKey!, vm_id };
    // In blocks of ten, not one by one: a round's leftovers (process teardown, projector catching
    // up) would otherwise land on the next measurement. The blocks take turns, so both sides of
    // a ratio see the same load when the shared machine's load drifts during the run.
    for (let done = 0; done < rounds; done += BLOCK) {
      const block = Math.min(BLOCK, rounds - done);
      for (let i = 0; i < block; i++) direct.push((await timed(() => driver.exec(vm_id, { argv: command }, () => {})))[1]);
      api.push(...(await execInOtherProcess({ ...client, command, kind: 'sync', count: block })));
      for (let i = 0; i < block; i++) driverFirstByte.push(await driverFirstChunkMs(bench.arbor.driver, vm_id));
      firstByte.push(...(await execInOtherProcess({ ...client, command: STREAMED_SCRIPT, kind: 'stream', count: block })));
    }
    const p50 = (s: number[]) => percentile(s, 50);
    console.log(`exec (${hypervisor} driver, ${rounds} rounds, embedded SQLite, real HTTP)`);
    report([
      ['driver.exec', spreadOf(direct)],
      ['POST /vm/{id}/exec', spreadOf(api)],
      ['API / driver ratio (p50)', `${(p50(api) / p50(direct)).toFixed(2)}× (goal ≤ 1.2×)`],
      ['driver.exec first chunk', spreadOf(driverFirstByte)],
      ['exec/stream first chunk line', spreadOf(firstByte)],
      ['stream / driver first chunk ratio (p50)', `${(p50(firstByte) / p50(driverFirstByte)).toFixed(2)}× (goal ≤ 1.2×)`],
    ]);
  } finally {
    await bench.stop();
  }
}

/** Rounds measured in a row for one side before the other side takes its turn. */
const BLOCK = 10;

const STREAMED_SCRIPT = ['sh', '-c', 'echo first; sleep 0.05; echo second'];

/** From calling driver.exec until its first output chunk (the floor for the streamed figure). */
async function driverFirstChunkMs(driver: HypervisorDriver, vm_id: string): Promise<number> {
  const start = process.hrtime.bigint();
  let first: number | null = null;
  await driver.exec(vm_id, { argv: STREAMED_SCRIPT }, () => (first ??= Number(process.hrtime.bigint() - start) / 1e6));
  return first!;
}
