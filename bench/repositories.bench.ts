import { InMemoryDriver } from '@arbor/hypervisor';
import { runOperatorCommand } from '../apps/api/src/operator/operator-command';
import { startBenchArbor, type BenchArbor } from './embedded-client';
import { percentile, report, spreadOf, timed } from './stats';

const PUBLIC_REPOS = 1000;

/** A key of a second org (made with the operator's command, as an operator would), and calls with it. */
async function secondOrg(bench: BenchArbor, name: string): Promise<(method: string, path: string) => Promise<any>> {
  const printed: string[] = [];
  await runOperatorCommand(['orgs', 'create', name, '--owner', `owner@${name}.example`], bench.arbor.infra, () => undefined);
  await runOperatorCommand(['keys', 'create', '--org', name, '--email', `owner@${name}.example`, '--label', 'bench key'], bench.arbor.infra, (line) => printed.push(line));
  const headers = { authorization: `Bearer ${printed[1]}`, 'content-type': 'application/json' };
  return async (method, path) => {
    const response = await fetch(bench.arbor.url + path, { method, headers });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path} (org ${name}): ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/**
 * Repositories through the API on the embedded service: the public listing with 1,000 public
 * repositories (goal p99 ≤ 20 ms), and what resolving a reference costs: a branch by_ref against
 * the same branch by_commit (goal ≤ 1.1× at p50), by_ref in both forms: `repo/tag` of the caller's
 * own org, and `org%2Frepo/tag` (`org/repo:tag`) of another org's public repository, from a second
 * org. The three are timed in turns, so a shared machine's load weighs on each alike. In-memory
 * machines: the control plane's own cost.
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
    const other = await secondOrg(bench, 'bench-other');
    const owner = (await bench.call('GET', '/arbor/v1/whoami')).org_name as string;
    const asAdmin = (method: string, path: string) => bench.call(method, path);
    const byCommit: number[] = [];
    const byRef: number[] = [];
    const byRefOtherOrg: number[] = [];
    for (let i = 0; i < 100; i++) {
      const series = [
        [byCommit, asAdmin, `by_commit/${commit_id}`],
        [byRef, asAdmin, `by_ref/repo-${i}/v1`],
        [byRefOtherOrg, other, `by_ref/${owner}%2Frepo-${i}/v1`],
      ] as const;
      for (const [samples, call, path] of series) {
        const [branched, ms] = await timed(() => call('POST', `/api/v1/vm/branch/${path}`));
        samples.push(ms);
        await call('DELETE', `/api/v1/vm/${branched.vms[0].vm_id}`);
      }
    }
    console.log(`repositories (embedded, real HTTP, in-memory machines, ${PUBLIC_REPOS} public repositories)`);
    report([
      ['GET /public/repositories', spreadOf(list)],
      ['branch by_commit', spreadOf(byCommit)],
      ['branch by_ref (own org, repo/tag)', spreadOf(byRef)],
      ['branch by_ref (another org\'s public repository, org%2Frepo/tag)', spreadOf(byRefOtherOrg)],
      ['by_ref own ÷ by_commit, p50 (goal ≤ 1.1×)', `×${(percentile(byRef, 50) / percentile(byCommit, 50)).toFixed(2)}`],
      ['by_ref another org\'s ÷ by_commit, p50 (goal ≤ 1.1×)', `×${(percentile(byRefOtherOrg, 50) / percentile(byCommit, 50)).toFixed(2)}`],
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
