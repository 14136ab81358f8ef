import { monitorEventLoopDelay } from 'node:perf_hooks';
import { PROJECTOR_CHECKPOINT } from '@arbor/application';
import { InMemoryDriver } from '@arbor/hypervisor';
import { VMS_COLLECTION } from '@arbor/read-models';
import { issueKeyForNewOrg } from '../test/support/issue-key';
import { appendVmCreation } from '../test/support/vm-history';
import { startBenchArbor } from './embedded-client';
import { type ReaderPlan, readInOtherProcess } from './http-readers';
import { formatMs, percentile, report, spreadOf } from './stats';
import { wrkInstalled, wrkRound } from './wrk-yardstick';

const ORGS = 100;
const VMS_PER_ORG = 100;
const READERS = Number(process.env.READERS ?? 50);
const READS_PER_READER = 100;
/** Requests each reader makes before the measured ones: connections opened, code paths compiled. */
const WARM_UP_READS = 10;
/** How long each of wrk's rounds runs. */
const WRK_SECONDS = 5;

/**
 * GET /vm/{id}/status and GET /vms over real HTTP with 10,000 VMs of 100 orgs in the read models,
 * 50 readers at once (each an org's key, half of its reads a get, half its org's list: 100 VMs).
 * The VMs are asked for straight on the log and booted by the worker in memory before the reads
 * start. Each reader warms up first. The same readers also read GET /api/v1/system/version (a
 * key checked, no read model): the floor of this HTTP stack, since with 50 requests always in
 * flight each waits for the others' share of the one event loop. The loop's longest stall
 * during the reads shows what else held it (the worker's resync shares it). Then wrk, a load
 * generator in C, makes the same kinds of reads (when installed): the readers' Node client costs
 * the machine about as much CPU per request as the service, and this machine has two cores.
 */
export async function benchApiReads(): Promise<void> {
  const bench = await startBenchArbor({}, new InMemoryDriver());
  try {
    const { eventStore, readModels } = bench.arbor.infra;
    const orgs = await Promise.all(Array.from({ length: ORGS }, (_, i) => issueKeyForNewOrg(eventStore, `reads-${i}`)));
    const vms = await Promise.all(
      orgs.map(async ({ org_id }) => {
        const ids: string[] = [];
        for (let i = 0; i < VMS_PER_ORG; i++) ids.push(await appendVmCreation(eventStore, org_id));
        return ids;
      }),
    );
    // The worker boots them all (in memory); measure once it and the projector are done.
    while ((await readModels.count(VMS_COLLECTION, { state: 'running' })) < ORGS * VMS_PER_ORG) await new Promise((r) => setTimeout(r, 200));
    const head = await eventStore.headPosition();
    while (((await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) ?? -1) < head) await new Promise((r) => setTimeout(r, 50));

    /** Every reader at once, in a process of their own, each warming up and then reading `reads` paths in turn. */
    const read = (reads: number, pathOf: (org: number, i: number) => { kind: string; path: string }) =>
      readInOtherProcess(
        bench.arbor.url,
        Array.from({ length: READERS }, (_, reader): ReaderPlan => {
          const org = reader % ORGS;
          const paths = (count: number) => Array.from({ length: count }, (_, i) => pathOf(org, i));
          return { headers: { authorization: `Bearer ${orgs[org].key}` }, warmUp: paths(WARM_UP_READS), reads: paths(reads) };
        }),
      );
    const mixed = (org: number, i: number) =>
      i % 2 === 1 ? { kind: 'list', path: '/api/v1/vms' } : { kind: 'get', path: `/api/v1/vm/${vms[org][(i * 37) % VMS_PER_ORG]}/status` };

    const floor = (await read(READS_PER_READER, () => ({ kind: 'floor', path: '/api/v1/system/version' }))).samples.floor;
    const stalls = monitorEventLoopDelay({ resolution: 1 });
    stalls.enable();
    const { samples, seconds } = await read(READS_PER_READER, mixed);
    stalls.disable();
    const { get, list } = samples;
    console.log(`API reads at ${ORGS * VMS_PER_ORG} VMs of ${ORGS} orgs, ${READERS} concurrent readers (embedded, real HTTP from another process, warmed up)`);
    report([
      ['get (GET /vm/{id}/status)', `${spreadOf(get)} (goal p99 ≤ 20 ms)`],
      [`list (GET /vms, ${VMS_PER_ORG} VMs of the org)`, `${spreadOf(list)} (goal p99 ≤ 20 ms)`],
      ['gets and lists answered', `${Math.round((get.length + list.length) / seconds)}/s; the event loop's longest stall ${formatMs(stalls.max / 1e6)}`],
      ['floor: GET /api/v1/system/version, same readers', spreadOf(floor)],
      ['get p50 ÷ floor p50, list p50 ÷ floor p50', `×${(percentile(get, 50) / percentile(floor, 50)).toFixed(2)}, ×${(percentile(list, 50) / percentile(floor, 50)).toFixed(2)}`],
    ]);
    if (!wrkInstalled()) {
      console.log('(wrk is not installed: no cross-check with a load generator in C)');
      return;
    }
    // The same reads from wrk (one org's key on every connection): what the service answers when
    // its clients cost the machine next to nothing.
    const headers = { authorization: `Bearer ${orgs[0].key}` };
    const gets = Array.from({ length: VMS_PER_ORG }, (_, i) => `/api/v1/vm/${vms[0][(i * 37) % VMS_PER_ORG]}/status`);
    const rounds: [string, string[]][] = [
      ['floor (GET /api/v1/system/version)', ['/api/v1/system/version']],
      ['get only', gets],
      ['list only', ['/api/v1/vms']],
      ['get and list in turn', gets.flatMap((path) => [path, '/api/v1/vms'])],
    ];
    console.log(`The same from wrk (C, one thread), ${READERS} connections, ${WRK_SECONDS} s each`);
    const rows: [string, string][] = [];
    for (const [label, paths] of rounds) {
      const { rate, p50, p99 } = await wrkRound(bench.arbor.url, headers, paths, READERS, WRK_SECONDS);
      rows.push([label, `p50 ${formatMs(p50)} / p99 ${formatMs(p99)}, ${Math.round(rate)}/s`]);
    }
    report(rows);
  } finally {
    await bench.stop();
  }
}
