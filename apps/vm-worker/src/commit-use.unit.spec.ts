import { randomUUID } from 'node:crypto';
import { Commit, Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { WorkerTestBed } from './testing/worker-test-bed';

/**
 * A VM started from a commit holds the commit on the commit's stream from before its machine uses
 * the snapshot until its machine is gone; a deleted commit never gets a machine again.
 */
describe('vm-worker: VMs from a commit hold it on the commit stream', () => {
  let bed: WorkerTestBed;
  let driver: InMemoryDriver;
  let source: string;
  let commit: string;

  beforeEach(async () => {
    bed = new WorkerTestBed();
    driver = new InMemoryDriver();
    await bed.start(driver);
    source = randomUUID();
    commit = randomUUID();
    await bed.requestVm(source);
    await bed.settle();
    await bed.requestCommit(source, commit);
    await bed.settle();
    driver.calls.length = 0;
  });
  afterEach(() => bed.destroy());

  it('claims the commit before starting the machine, and releases it before reporting the VM deleted', async () => {
    const child = randomUUID();
    await bed.requestVm(child, { commit_id: commit, source_vm_id: source });
    await bed.settle();
    expect(driver.calls).toEqual([`start ${child}`]);
    expect(await bed.types(Commit.stream(commit))).toEqual(['CommitCreated', 'CommitUsedByVm']);

    await bed.vm(child, { type: 'RequestVmDeletion' });
    await bed.settle();
    expect(driver.calls).toEqual([`start ${child}`, `destroy ${child}`]);
    const all = await bed.store.readAll();
    const released = all.findIndex((e) => e.type === 'CommitReleasedByVm');
    const deleted = all.findIndex((e) => e.type === 'VmDeleted' && e.stream_id === Vm.stream(child));
    expect(released).toBeGreaterThan(-1);
    expect(released).toBeLessThan(deleted);
    await bed.commit(commit, { type: 'DeleteCommit', now: new Date().toISOString() });
    await bed.settle();
    expect(await driver.getSnapshot(commit)).toBeNull();
  });

  it("claims another org's private commit for a VM that reached it through a public repository, and only then", async () => {
    const [viaRepository, direct] = [randomUUID(), randomUUID()];
    await bed.stop(); // the worker claims first: the API's own claim has not been appended
    const request = (vm_id: string, through_public_repository?: true) =>
      bed.vm(vm_id, {
        type: 'RequestVmCreation', vm_id, org_id: 'org-2', owner_id: 'key-2', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::2',
        parent_commit_id: commit, grandparent_vm_id: source, through_public_repository, now: new Date().toISOString(),
      });
    await request(viaRepository, true);
    await request(direct);
    await bed.start(driver);
    await bed.settle();

    expect(await bed.types(Vm.stream(viaRepository))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
    expect(await bed.types(Vm.stream(direct))).toEqual(['VmCreationRequested', 'VmBootFailed', 'VmDeleted']);
    expect(driver.calls.filter((call) => call.startsWith('start'))).toEqual([`start ${viaRepository}`]);
    await bed.vm(viaRepository, { type: 'RequestVmDeletion' });
    await bed.settle();
  });

  it('a VM whose commit was deleted before its machine started fails without a start and is deleted', async () => {
    const child = randomUUID();
    await bed.stop();
    await bed.requestVm(child, { commit_id: commit, source_vm_id: source }); // the API stopped before it could record the use
    await bed.commit(commit, { type: 'DeleteCommit', now: new Date().toISOString() });
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls.filter((c) => c.startsWith('start'))).toEqual([]);
    const events = await bed.store.readStream(Vm.stream(child));
    expect(events.map((e) => e.type)).toEqual(['VmCreationRequested', 'VmBootFailed', 'VmDeleted']);
    expect((events[1].data as { reason: string }).reason).toBe(`commit ${commit} not found`);
    expect(await bed.types(Commit.stream(commit))).toEqual(['CommitCreated', 'CommitDeleted']);
  });

  it('a VM that fails to start from the commit releases it', async () => {
    const child = randomUUID();
    driver.failNext('start', 'out of memory on the host');
    await bed.requestVm(child, { commit_id: commit, source_vm_id: source });
    await bed.settle();
    expect(driver.calls).toEqual([`start ${child}`, `destroy ${child}`]);
    expect(await bed.types(Commit.stream(commit))).toEqual(['CommitCreated', 'CommitUsedByVm', 'CommitReleasedByVm']);
    expect(await bed.types(Vm.stream(child))).toEqual(['VmCreationRequested', 'VmBootFailed', 'VmDeleted']);
  });

  it('a dead VM still holds its commit until it is deleted', async () => {
    const child = randomUUID();
    await bed.requestVm(child, { commit_id: commit, source_vm_id: source });
    await bed.settle();
    await bed.stop();
    driver.lose(child);
    await bed.start(driver);
    await bed.settle();
    expect(await bed.types(Vm.stream(child))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmDied']);
    await expect(bed.commit(commit, { type: 'DeleteCommit', now: new Date().toISOString() })).rejects.toThrow('commit still has 1 active VM(s)');
  });
});
