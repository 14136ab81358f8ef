import { randomUUID } from 'node:crypto';
import { loadDeployConfig, newCommandContext, requestProjectVm } from '@arbor/application';
import { Project, Vm, VM_CONFIG_DEFAULTS, type ProjectState } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { GitHttpServer } from '../../../test/support/git-http-server';
import { pollUntil } from '../../../test/support/poll-until';
import { WorkerTestBed } from './testing/worker-test-bed';

/**
 * The deploy saga with two workers (two hosts, machines in memory) on one log and a real git host:
 * the worker the project's VM is placed on clones and copies it in through its own driver, the
 * other one touches nothing; a project whose api stopped before asking for the VM gets it from the
 * saga, once.
 */
describe('deploy saga across two hosts', () => {
  let bed: WorkerTestBed;
  let git: GitHttpServer;
  let hosts: Record<'a' | 'b', InMemoryDriver>;

  beforeAll(async () => {
    git = await GitHttpServer.start();
    git.commit('acme/web', { 'README.md': 'hello\n' });
  });
  afterAll(() => git.stop());
  beforeEach(async () => {
    bed = new WorkerTestBed();
    hosts = { a: new InMemoryDriver(), b: new InMemoryDriver() };
    const deploy = loadDeployConfig({ ARBOR_GIT_BASE_URL: git.url });
    await Promise.all([bed.start(hosts.a, 'a', { deploy }), bed.start(hosts.b, 'b', { deploy })]);
  });
  afterEach(() => bed.destroy());

  /** What the api appends for a deploy (the VM asked for, unless `withVm` is false: an api that stopped in between). */
  async function requestProject(withVm: boolean) {
    const project_id = randomUUID();
    const vm_id = randomUUID();
    const context = newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
    const settings = { install_command: 'npm ci', build_command: null, run_command: null, working_directory: null };
    const request = {
      project_id, org_id: 'org-1', owner_id: 'key-1', name: `p-${project_id.slice(0, 8)}`, repo: 'acme/web', git_base_url: git.url, branch: 'main', commit_sha: 'a'.repeat(40),
      settings, directory: '/root/web', working_dir: '/root/web', vm_id, vm_config: VM_CONFIG_DEFAULTS, vm_ssh_public_key: 'ssh-ed25519 AAAA test', vm_ssh_key_generation: 1,
    };
    const { event_ids } = await bed.aggregates.handle(Project, project_id, { type: 'RequestProject', ...request, now: new Date().toISOString() }, context);
    if (withVm) await requestProjectVm(bed.aggregates, { ...request, requested_at: '' }, { event_id: event_ids[0], correlation_id: context.correlation_id }, {});
    return { project_id, vm_id };
  }
  const stateOf = async (project_id: string): Promise<ProjectState> => (await bed.aggregates.load(Project, project_id)).state;

  it('the worker holding the VM clones, copies the tree in through its driver and runs the steps; the other does nothing', async () => {
    const deploys = await Promise.all([requestProject(true), requestProject(true), requestProject(true)]);
    for (const { project_id, vm_id } of deploys) {
      await pollUntil(async () => (await stateOf(project_id)).status === 'ready', { timeoutMs: 30_000 });
      const [owner, ...more] = await bed.placement(vm_id);
      expect(more).toEqual([]);
      const other = owner === 'a' ? 'b' : 'a';
      const calls = (host: 'a' | 'b') => hosts[host].calls.filter((c) => c.endsWith(` ${vm_id}`));
      // create, the unpacking exec, then the install step's exec: all on the owner.
      expect(calls(owner as 'a' | 'b')).toEqual([`create ${vm_id}`, `exec ${vm_id}`, `exec ${vm_id}`]);
      expect(calls(other)).toEqual([]);
      const state = await stateOf(project_id);
      expect([state.copied, state.step]).toEqual([true, 'install']);
    }
  });

  it("asks for the VM when the api stopped before it did: one VM, and the deploy goes on", async () => {
    const { project_id, vm_id } = await requestProject(false);
    await pollUntil(async () => (await stateOf(project_id)).status === 'ready', { timeoutMs: 30_000 });
    expect(await bed.types(Vm.stream(vm_id))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
  });
});
