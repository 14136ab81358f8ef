import { InMemoryDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { percentile, report, spreadOf, timed } from './stats';

const PUBLIC_REPOS = 1000;

/**
 * Repositories through the API on the embedded service: the public listing with 1,000 public
 * repositories (goal p99 ≤ 20 ms), and what resolving a reference costs: a branch by_ref against
 * the same branch by_commit (goal ≤ 1.1× at p50). In-memory machines: the control plane's own cost.
 */
export async function benchRepositories(): Promise<void> {
  const bench = await startBenchArbor({}, new InMemoryDriver());
  try {
    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    const { commit_id } = await bench.call('POST', `/api/v1/vm/${vm_id}/commit`);
    for (let i = 0; i < PUBLIC_REPOS; i++) {
      const name = `repo-${i}`;
      await bench.call('POST', '/api/v1/repositories', { name });
      await bench.call('POST', `/api/v1/repositories/${name}/tags`, { tag_name: 'v1', commit_id });
      await bench.call('PATCH', `/api/v1/repositories/${name}/visibility`, { is_public: true });
    }
    const list: number[] = [];
    for (let i = 0; i < 200; i++) list.push((await timed(() => bench.call('GET', '/api/v1/public/repositories')))[1]);
    const byCommit: number[] = [];
    const byRef: number[] = [];
    for (let i = 0; i < 100; i++) {
      for (const [samples, path] of [[byCommit, `by_commit/${commit_id}`], [byRef, `by_ref/repo-${i}/v1`]] as const) {
        const [branched, ms] = await timed(() => bench.call('POST', `/api/v1/vm/branch/${path}`));
        samples.push(ms);
        await bench.call('DELETE', `/api/v1/vm/${branched.vms[0].vm_id}`);
      }
    }
    console.log(`repositories (embedded, real HTTP, in-memory machines, ${PUBLIC_REPOS} public repositories)`);
    report([
      ['GET /public/repositories', spreadOf(list)],
      ['branch by_commit', spreadOf(byCommit)],
      ['branch by_ref', spreadOf(byRef)],
      ['by_ref ÷ by_commit, p50 (goal ≤ 1.1×)', `×${(percentile(byRef, 50) / percentile(byCommit, 50)).toFixed(2)}`],
    ]);
  } finally {
    await bench.stop();
  }
}

/** Fork end to end on a real driver: a public tag → a running VM, a commit and a tag of the caller's org. */
export async function benchFork(hypervisor: 'sandbox', rounds: number): Promise<void> {
  const bench = await startBenchArbor({ HYPERVISOR: hypervisor, ARBOR_ORG_NAME: 'bench' });
  try {
    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    const { commit_id } = await bench.call('POST', `/api/v1/vm/${vm_id}/commit`);
    await bench.call('POST', '/api/v1/repositories', { name: 'app' });
    await bench.call('POST', '/api/v1/repositories/app/tags', { tag_name: 'v1', commit_id });
    await bench.call('PATCH', '/api/v1/repositories/app/visibility', { is_public: true });
    const forks: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const [forked, ms] = await timed(() => bench.call('POST', '/api/v1/repositories/fork', { source_org: 'bench', source_repo: 'app', source_tag: 'v1', repo_name: `fork-${i}` }));
      forks.push(ms);
      await bench.call('DELETE', `/api/v1/vm/${forked.vm_id}`);
    }
    console.log(`fork end to end (${hypervisor} driver, ${rounds} rounds, the fork's VM running and its tag made at answer)`);
    report([['POST /repositories/fork', spreadOf(forks)]]);
  } finally {
    await bench.stop();
  }
}
