import type { HypervisorDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { percentile, report, spreadOf, timed } from './stats';

/**
 * Exec through the log on a real driver: the sync round trip through the API (append the request,
 * the worker runs it and appends output and exit, the API follows the stream) against the same
 * command straight on the driver, and how soon a streamed exec's first output line arrives.
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
    // In blocks of ten, not one by one: a round's leftovers (process teardown, projector catching
    // up) would otherwise land on the next measurement. The blocks take turns, so both sides of
    // a ratio see the same load when the shared machine's load drifts during the run.
    for (let done = 0; done < rounds; done += BLOCK) {
      const block = Math.min(BLOCK, rounds - done);
      for (let i = 0; i < block; i++) direct.push((await timed(() => driver.exec(vm_id, { argv: command }, () => {})))[1]);
      for (let i = 0; i < block; i++) api.push((await timed(() => bench.call('POST', `/api/v1/vm/${vm_id}/exec`, { command })))[1]);
      for (let i = 0; i < block; i++) driverFirstByte.push(await driverFirstChunkMs(bench.arbor.driver, vm_id));
      for (let i = 0; i < block; i++) firstByte.push(await streamFirstLineMs(bench.arbor.url, bench.arbor.createdAdminKey!, vm_id));
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

/** From sending POST /exec/stream until the first chunk line has arrived (then reads to the end). */
async function streamFirstLineMs(url: string, key: string, vm_id: string): Promise<number> {
  const start = process.hrtime.bigint();
  const response = await fetch(`${url}/api/v1/vm/${vm_id}/exec/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ command: STREAMED_SCRIPT }),
  });
  if (response.status !== 200) throw new Error(`exec/stream: ${response.status} ${await response.text()}`);
  const reader = response.body!.getReader();
  let text = '';
  let firstLineMs: number | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString();
    if (firstLineMs === null && text.includes('"type":"chunk"') && text.includes('\n')) firstLineMs = Number(process.hrtime.bigint() - start) / 1e6;
  }
  if (firstLineMs === null) throw new Error(`no chunk line in ${text}`);
  return firstLineMs;
}
