import { randomUUID } from 'node:crypto';
import { Commit, Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { WorkerTestBed } from './testing/worker-test-bed';

/**
 * A commit is three steps (the snapshot on the host, the commit's stream, the VM's outcome); a
 * worker that crashes between two of them finishes the commit when it starts again, from where it
 * stopped, without taking the snapshot a second time.
 */
describe('vm-worker: a commit cut off by a crash is finished on restart', () => {
  let bed: WorkerTestBed;
  let driver: InMemoryDriver;
  let vm: string;
  let commit: string;

  beforeEach(async () => {
    bed = new WorkerTestBed();
    driver = new InMemoryDriver();
    vm = randomUUID();
    commit = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    await bed.stop();
    // The commit is asked for, and the worker gets as far as the snapshot before it dies.
    await bed.requestCommit(vm, commit);
    await driver.commit(vm, commit);
    driver.calls.length = 0;
  });
  afterEach(() => bed.destroy());

  it('after the snapshot: records the commit and the outcome, caused by the intent, without a second snapshot', async () => {
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls).toEqual([]);
    expect(await bed.types(Commit.stream(commit))).toEqual(['CommitCreated']);
    const events = await bed.store.readStream(Vm.stream(vm));
    expect(events.map((e) => e.type)).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmCommitRequested', 'VmCommitted']);
    const [created] = await bed.store.readStream(Commit.stream(commit));
    expect(created.metadata.causation_id).toBe(events[3].id);
    expect(created.data).toMatchObject({ commit_id: commit, parent_vm_id: vm, name: 'c', includes_memory: false });
  });

  it("after the commit's stream: records only the VM's outcome", async () => {
    const snapshot = (await driver.getSnapshot(commit))!;
    await bed.commit(commit, {
      type: 'RecordCommitCreated',
      commit_id: commit,
      org_id: 'org-1',
      owner_id: 'key-1',
      name: 'c',
      description: null,
      parent_vm_id: vm,
      grandparent_commit_id: null,
      includes_memory: snapshot.includes_memory,
      config: VM_CONFIG_DEFAULTS,
      driver: driver.name,
      created_at: snapshot.created_at,
    });
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls).toEqual([]);
    expect(await bed.types(Commit.stream(commit))).toEqual(['CommitCreated']);
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmCommitRequested', 'VmCommitted']);
  });

  it('before the snapshot: takes it once', async () => {
    await driver.deleteSnapshot(commit);
    driver.calls.length = 0;
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls).toEqual([`commit ${vm}`]);
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmCommitRequested', 'VmCommitted']);
  });
});
