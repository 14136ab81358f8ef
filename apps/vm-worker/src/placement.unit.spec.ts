import { randomUUID } from 'node:crypto';
import { Exec, execKey, Vm } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { WorkerTestBed } from './testing/worker-test-bed';

/**
 * Two vm-workers (two hosts, each its own driver) on one log. Each VM is placed on one worker by
 * its placement stream, and only that worker creates, reconciles, reports, execs and deletes it.
 */
describe('vm-worker placement across two hosts', () => {
  let bed: WorkerTestBed;
  let hosts: Record<'a' | 'b', InMemoryDriver>;

  beforeEach(async () => {
    bed = new WorkerTestBed();
    hosts = { a: new InMemoryDriver(), b: new InMemoryDriver() };
  });
  afterEach(() => bed.destroy());

  const startBoth = () => Promise.all([bed.start(hosts.a, 'a'), bed.start(hosts.b, 'b')]);
  const callsFor = (vm_id: string) => ({
    a: hosts.a.calls.filter((c) => c.endsWith(` ${vm_id}`)),
    b: hosts.b.calls.filter((c) => c.endsWith(` ${vm_id}`)),
  });
  /** A running root VM on the given worker (the other one is stopped while it is placed). */
  const rootOn = async (worker: 'a' | 'b') => {
    const other = worker === 'a' ? 'b' : 'a';
    await bed.stop(other);
    const vm_id = randomUUID();
    await bed.requestVm(vm_id);
    await bed.settle();
    await bed.start(hosts[other], other);
    await bed.settle();
    return vm_id;
  };

  it('creates each VM exactly once, on the one worker it is placed on', async () => {
    await startBoth();
    const vms = Array.from({ length: 12 }, () => randomUUID());
    await Promise.all(vms.map((vm) => bed.requestVm(vm)));
    await bed.settle();
    for (const vm of vms) {
      const [owner, ...more] = await bed.placement(vm);
      expect(more).toEqual([]);
      const other = owner === 'a' ? 'b' : 'a';
      expect(callsFor(vm)).toEqual({ [owner]: [`create ${vm}`], [other]: [] });
      expect(await hosts[owner as 'a' | 'b'].status(vm)).toBe('running');
      expect(await hosts[other].status(vm)).toBeNull();
      expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
    }
  });

  it('starts a VM from a commit on the worker that holds the snapshot', async () => {
    await startBoth();
    for (const holder of ['a', 'b'] as const) {
      const source = await rootOn(holder);
      const commit = randomUUID();
      await bed.requestCommit(source, commit);
      await bed.settle();
      expect(await hosts[holder].getSnapshot(commit)).not.toBeNull();
      const children = Array.from({ length: 4 }, () => randomUUID());
      await Promise.all(children.map((child) => bed.requestVm(child, { commit_id: commit, source_vm_id: source })));
      await bed.settle();
      for (const child of children) {
        expect(await bed.placement(child)).toEqual([holder]);
        expect(callsFor(child)[holder]).toEqual([`start ${child}`]);
        expect(callsFor(child)[holder === 'a' ? 'b' : 'a']).toEqual([]);
        expect(await bed.types(Vm.stream(child))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
      }
    }
  });

  it("a VM from a commit no host holds any more is failed by the commit's source worker, once", async () => {
    await startBoth();
    const source = await rootOn('b');
    const commit = randomUUID();
    await bed.requestCommit(source, commit);
    await bed.settle();
    await hosts.b.deleteSnapshot(commit); // lost on the host, still in the log
    const child = randomUUID();
    await bed.requestVm(child, { commit_id: commit, source_vm_id: source });
    await bed.settle();
    expect(await bed.placement(child)).toEqual(['b']);
    expect(callsFor(child)).toEqual({ a: [], b: [`start ${child}`, `destroy ${child}`] });
    expect(await bed.types(Vm.stream(child))).toEqual(['VmCreationRequested', 'VmBootFailed', 'VmDeleted']);
  });

  it("a resync or full replay of worker B never reports A's VM dead nor touches it; A still does", async () => {
    await startBoth();
    const vm = await rootOn('a');
    hosts.b.calls.length = 0;
    await bed.stop('b');
    bed.forgetCheckpoint('b'); // B replays the whole log, A's VM included
    await bed.start(hosts.b, 'b');
    await bed.settle();
    expect(hosts.b.calls).toEqual([]);
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);

    await bed.stop('a');
    hosts.a.lose(vm);
    await bed.start(hosts.a, 'a');
    await bed.settle();
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmDied']);
    expect(hosts.b.calls).toEqual([]);
  });

  it("execs, pauses and the deletion of a VM run on its own worker only", async () => {
    await startBoth();
    const vm = await rootOn('b');
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['echo', 'hi']);
    await bed.settle();
    expect(await bed.types(Exec.stream(execKey('org-1', exec)))).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited']);
    await bed.vm(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await bed.settle();
    await bed.vm(vm, { type: 'RequestVmDeletion' });
    await bed.settle();
    expect(callsFor(vm)).toEqual({ a: [], b: [`create ${vm}`, `exec ${vm}`, `pause ${vm}`, `destroy ${vm}`] });
    expect(await bed.types(Vm.stream(vm))).toEqual([
      'VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmPauseRequested', 'VmPaused', 'VmDeletionRequested', 'VmDeleted',
    ]);
  });

  it('a machine on a host other than its VM\'s placement is destroyed there as an orphan', async () => {
    await startBoth();
    const vm = await rootOn('a');
    await bed.stop('b');
    hosts.b.adopt(vm); // e.g. left over on B from a previous life
    hosts.b.calls.length = 0;
    await bed.start(hosts.b, 'b');
    await bed.settle();
    expect(hosts.b.calls).toEqual([`destroy ${vm}`]);
    expect(await hosts.a.status(vm)).toBe('running');
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
  });
});
