import { PROJECTOR_CHECKPOINT } from '@arbor/application';
import { InMemoryDriver } from '@arbor/hypervisor';
import { VMS_COLLECTION } from '@arbor/read-models';
import { issueKeyForNewOrg } from '../test/support/issue-key';
import { appendVmCreation } from '../test/support/vm-history';
import { startBenchArbor } from './embedded-client';
import { report, spreadOf } from './stats';

const ORGS = 100;
const VMS_PER_ORG = 100;
const READERS = Number(process.env.READERS ?? 50);
const READS_PER_READER = 100;

/**
 * GET /vm/{id}/status and GET /vms over real HTTP with 10,000 VMs of 100 orgs in the read models,
 * 50 readers at once (each an org's key, half of its reads a get, half its org's list). The VMs
 * are asked for straight on the log and booted by the worker in memory before the reads start.
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

    const get: number[] = [];
    const list: number[] = [];
    await Promise.all(
      Array.from({ length: READERS }, async (_, reader) => {
        const org = reader % ORGS;
        const headers = { authorization: `Bearer ${orgs[org].key}` };
        for (let i = 0; i < READS_PER_READER; i++) {
          const listing = i % 2 === 1;
          const path = listing ? '/api/v1/vms' : `/api/v1/vm/${vms[org][(i * 37) % VMS_PER_ORG]}/status`;
          const start = process.hrtime.bigint();
          const response = await fetch(bench.arbor.url + path, { headers });
          const body = await response.text();
          if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body}`);
          (listing ? list : get).push(Number(process.hrtime.bigint() - start) / 1e6);
        }
      }),
    );
    console.log(`API reads at ${ORGS * VMS_PER_ORG} VMs of ${ORGS} orgs, ${READERS} concurrent readers (embedded, real HTTP)`);
    report([
      ['get (GET /vm/{id}/status)', `${spreadOf(get)} (goal p99 ≤ 20 ms)`],
      [`list (GET /vms, ${VMS_PER_ORG} VMs of the org)`, `${spreadOf(list)} (goal p99 ≤ 20 ms)`],
    ]);
  } finally {
    await bench.stop();
  }
}
