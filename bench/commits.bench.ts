import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext } from '@arbor/application';
import { Commit, SystemBootstrap, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { report, spreadOf, timed } from './stats';

const DEPTH = 1000;

/** GET /vm/commits/{id}/parents on a 1,000-deep chain (commits written straight to the log). */
export async function benchParentsChain(): Promise<void> {
  const bench = await startBenchArbor({}, new InMemoryDriver());
  try {
    const aggregates = new AggregateRepository(bench.arbor.infra.eventStore);
    const { org_id, key_id } = (await aggregates.load(SystemBootstrap, 'bootstrap')).state.bootstrapped!;
    let parent: string | null = null;
    for (let i = 0; i < DEPTH; i++) {
      const commit_id = randomUUID();
      const command = {
        type: 'RecordCommitCreated' as const, commit_id, org_id, owner_id: key_id, name: `c${i}`, description: null, parent_vm_id: randomUUID(),
        grandparent_commit_id: parent, includes_memory: false, config: VM_CONFIG_DEFAULTS, driver: 'bench', created_at: new Date().toISOString(),
      };
      await aggregates.handle(Commit, commit_id, command, newCommandContext({ org_id, actor_key_id: key_id }));
      parent = commit_id;
    }
    const leaf = parent!;
    // The first call also waits out the projector catching up with the 1,000 appends.
    for (let i = 0; i < 200; i++) {
      try {
        if ((await bench.call('GET', `/api/v1/vm/commits/${leaf}/parents`)).length === DEPTH) break;
      } catch {
        // not projected yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      const [chain, ms] = await timed(() => bench.call('GET', `/api/v1/vm/commits/${leaf}/parents`));
      if (chain.length !== DEPTH) throw new Error(`chain of ${chain.length}, expected ${DEPTH}`);
      samples.push(ms);
    }
    console.log(`parents chain (${DEPTH} deep, embedded SQLite read models, real HTTP)`);
    report([['GET /vm/commits/{id}/parents', spreadOf(samples)]]);
  } finally {
    await bench.stop();
  }
}

/** Commit and branch end to end through the API on a real driver (create → running first). */
export async function benchCommitAndBranch(hypervisor: 'sandbox' | 'qemu', rounds: number): Promise<void> {
  // Back-to-back branches leave the worker no quiet moment to refill its spare disks: as many as the rounds.
  const bench = await startBenchArbor({ HYPERVISOR: hypervisor, ARBOR_SANDBOX_DISK_POOL: process.env.ARBOR_SANDBOX_DISK_POOL ?? String(rounds) });
  try {
    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
    await (bench.arbor.driver as { spareDisksFull?: () => Promise<void> }).spareDisksFull?.();
    const commit: number[] = [];
    const branch: number[] = [];
    for (let i = 0; i < rounds; i++) {
      commit.push((await timed(() => bench.call('POST', `/api/v1/vm/${vm_id}/commit`)))[1]);
      const [branched, ms] = await timed(() => bench.call('POST', `/api/v1/vm/branch/by_vm/${vm_id}`));
      branch.push(ms);
      await bench.call('DELETE', `/api/v1/vm/${branched.vms[0].vm_id}`);
    }
    console.log(`commit and branch through the API (${hypervisor} driver, ${rounds} rounds, child running at answer)`);
    report([
      ['commit', spreadOf(commit)],
      ['branch by_vm (commit + child)', spreadOf(branch)],
    ]);
  } finally {
    await bench.stop();
  }
}
