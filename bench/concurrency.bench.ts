import { loadavg } from 'node:os';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { report, spreadOf, timed } from './stats';

interface Outcome {
  ms: number;
  error?: string;
}

/** Runs `count` calls at once; each one's time, or its error. */
async function allAtOnce(count: number, call: (index: number) => Promise<unknown>): Promise<[Outcome[], number]> {
  return timed(() =>
    Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const start = process.hrtime.bigint();
        try {
          await call(index);
          return { ms: Number(process.hrtime.bigint() - start) / 1e6 };
        } catch (error) {
          return { ms: Number(process.hrtime.bigint() - start) / 1e6, error: (error as Error).message };
        }
      }),
    ),
  );
}

const summary = (outcomes: Outcome[], wallMs: number) => {
  if (outcomes.length === 0) return 'none';
  const errors = outcomes.filter((outcome) => outcome.error);
  const first = errors[0]?.error ? ` (first: ${errors[0].error.slice(0, 120)})` : '';
  return `${spreadOf(outcomes.map((outcome) => outcome.ms))}, wall ${(wallMs / 1000).toFixed(2)} s, ${errors.length} error(s)${first}`;
};

/**
 * `count` concurrent `POST /vm/new_root?wait_boot=true` (the default VM config), then `count`
 * concurrent deletes, through the API. The org's quotas are the benches' (startBenchArbor), which fit them. `memory` runs the
 * same on in-memory machines: the control plane's own share of the figures. The sandbox keeps
 * `warmPool` machines booted ahead (ARBOR_SANDBOX_WARM_POOL), filled before the burst.
 */
export async function benchConcurrentMachines(hypervisor: 'sandbox' | 'qemu' | 'memory', count: number, warmPool = 0): Promise<void> {
  const bench =
    hypervisor === 'memory'
      ? await startBenchArbor({}, new InMemoryDriver())
      : await startBenchArbor({ HYPERVISOR: hypervisor, ARBOR_SANDBOX_WARM_POOL: String(warmPool) });
  try {
    const [, filled] = await timed(async () => (bench.arbor.driver as { warmPoolFull?: () => Promise<void> }).warmPoolFull?.());
    const load = loadavg()[0]; // before the burst: what else the host was doing
    const vms: string[] = [];
    const [created, createWall] = await allAtOnce(count, async () => {
      const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
      vms.push(vm_id);
    });
    const [deleted, deleteWall] = await allAtOnce(vms.length, (index) => bench.call('DELETE', `/api/v1/vm/${vms[index]}`));
    const pool = warmPool > 0 ? `, a warm pool of ${warmPool} (filled in ${(filled / 1000).toFixed(1)} s before)` : '';
    console.log(`${count} machines at once (${hypervisor}${pool}, embedded service, real HTTP, load average ${load.toFixed(1)} before)`);
    report([
      [`${count} concurrent POST /vm/new_root?wait_boot=true`, summary(created, createWall)],
      [`${vms.length} concurrent DELETE /vm/{id}`, summary(deleted, deleteWall)],
    ]);
  } finally {
    await bench.stop();
  }
}
