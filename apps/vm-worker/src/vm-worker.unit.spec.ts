import { randomUUID } from 'node:crypto';
import { Vm } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { WorkerTestBed } from './testing/worker-test-bed';

/**
 * The worker as a level-triggered controller: given the log and the host, it makes exactly the
 * driver calls needed, reports outcomes as events, and does nothing on a replay.
 */
describe('vm-worker reconcile', () => {
  let bed: WorkerTestBed;
  let driver: InMemoryDriver;

  beforeEach(() => {
    bed = new WorkerTestBed();
    driver = new InMemoryDriver();
  });
  afterEach(() => bed.destroy());

  it('creates the machine for a requested VM and reports it booted, caused by the intent', async () => {
    const vm = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    expect(driver.calls).toEqual([`create ${vm}`]);
    const events = await bed.store.readStream(Vm.stream(vm));
    expect(events.map((e) => e.type)).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
    expect(events[1].metadata.causation_id).toBe(events[0].id);
    expect(events[1].metadata.correlation_id).toBe(events[0].metadata.correlation_id);
    expect(events[1].metadata.org_id).toBe('org-1');
    expect(events[2].metadata.causation_id).toBe(events[0].id);
    const addresses = (await driver.addresses(vm))!;
    expect(events[1].data).toEqual({ vm_id: vm, ipv6: addresses.ipv6, ipv4: addresses.ipv4 });
  });

  it('pauses, resumes and deletes with exactly one driver call each', async () => {
    const vm = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    await bed.vm(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await bed.settle();
    await bed.vm(vm, { type: 'RequestVmStateChange', target: 'Running' });
    await bed.settle();
    await bed.vm(vm, { type: 'RequestVmDeletion' });
    await bed.settle();
    expect(driver.calls).toEqual([`create ${vm}`, `pause ${vm}`, `resume ${vm}`, `destroy ${vm}`]);
    expect(await bed.types(Vm.stream(vm))).toEqual([
      'VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmPauseRequested', 'VmPaused', 'VmResumeRequested', 'VmResumed', 'VmDeletionRequested', 'VmDeleted',
    ]);
  });

  it('replaying the whole log after losing its checkpoint makes no driver call and appends nothing', async () => {
    const vm = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    await bed.vm(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await bed.settle();
    await bed.stop();
    bed.forgetCheckpoint();
    driver.calls.length = 0;
    const head = await bed.store.headPosition();
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls).toEqual([]);
    expect(await bed.store.headPosition()).toBe(head);
  });

  it('a machine created just before a crash is adopted, not created twice', async () => {
    const vm = randomUUID();
    await bed.requestVm(vm);
    driver.adopt(vm); // the driver created it; the outcome was never appended
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls).toEqual([]);
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
  });

  it('on start, reports VMs whose machine is gone as dead and destroys orphans', async () => {
    const vm = randomUUID();
    const orphan = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    await bed.stop();
    driver.lose(vm); // e.g. the host rebooted
    driver.adopt(orphan); // a machine the log never asked for
    driver.calls.length = 0;
    await bed.start(driver);
    await bed.settle();
    expect(driver.calls).toEqual([`destroy ${orphan}`]);
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmDied']);
    expect(await driver.status(orphan)).toBeNull();
  });

  it('a failed create is cleaned up: reported with its reason, the VM deleted, nothing left behind', async () => {
    const vm = randomUUID();
    driver.failNext('create', 'no space left on device');
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    expect(driver.calls).toEqual([`create ${vm}`, `destroy ${vm}`]);
    const events = await bed.store.readStream(Vm.stream(vm));
    expect(events.map((e) => e.type)).toEqual(['VmCreationRequested', 'VmBootFailed', 'VmDeleted']);
    expect((events[1].data as { reason: string }).reason).toBe('no space left on device');
    expect(events[1].metadata.causation_id).toBe(events[0].id);
    expect(await driver.list()).toEqual([]);
  });

  it('a failed pause is reported and the VM stays running', async () => {
    const vm = randomUUID();
    await bed.start(driver);
    await bed.requestVm(vm);
    await bed.settle();
    driver.failNext('pause', 'freezer busy');
    await bed.vm(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await bed.settle();
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmPauseRequested', 'VmOperationFailed']);
    expect(await driver.status(vm)).toBe('running');
  });

  it('resumes following the log after a restart from its checkpoint', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await bed.start(driver);
    await bed.requestVm(a);
    await bed.settle();
    await bed.start(driver); // a restart: stops it, then starts it from its checkpoint
    await bed.requestVm(b);
    await bed.settle();
    expect(driver.calls).toEqual([`create ${a}`, `create ${b}`]);
  });

  it('the periodic resync heals drift of a VM it found converged: a machine paused behind its back is resumed, one gone is reported dead', async () => {
    const vm = randomUUID();
    await bed.start(driver, 'worker-1', { resyncIntervalMs: 20 });
    await bed.requestVm(vm);
    await bed.settle();
    await bed.settle(); // resyncs pass over the converged VM
    expect(driver.calls).toEqual([`create ${vm}`]);
    await driver.pause(vm);
    await until(async () => (await driver.status(vm)) === 'running');
    expect(driver.calls).toEqual([`create ${vm}`, `pause ${vm}`, `resume ${vm}`]);
    driver.lose(vm);
    await until(async () => (await bed.types(Vm.stream(vm))).includes('VmDied'));
    expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmDied']);
  });

  it('a worker stopped and started again goes on resyncing', async () => {
    const vm = randomUUID();
    const worker = await bed.start(driver, 'worker-1', { resyncIntervalMs: 20 });
    await bed.requestVm(vm);
    await bed.settle();
    await worker.stop();
    await worker.start();
    driver.lose(vm);
    await until(async () => (await bed.types(Vm.stream(vm))).includes('VmDied'));
  });

  it('a reaction the resync started that takes long does not hold up the next looks at the other VMs', async () => {
    const [slow, other] = [randomUUID(), randomUUID()];
    await bed.start(driver, 'worker-1', { resyncIntervalMs: 20 });
    await bed.requestVm(slow);
    await bed.requestVm(other);
    await bed.settle();
    driver.slowDown('resume', 8_000);
    await driver.pause(slow); // behind the worker's back: a resync resumes it, for 8 s (longer than the look below waits)
    await until(async () => driver.calls.includes(`resume ${slow}`));
    driver.lose(other);
    await until(async () => (await bed.types(Vm.stream(other))).includes('VmDied'));
    driver.slowDown('resume', 0);
  });
});

/**
 * Machine work in parallel: different VMs proceed at once, at most the pool's size of machine
 * operations at a time; one VM's operations still run one at a time, in log order.
 */
describe('vm-worker under parallel work', () => {
  let bed: WorkerTestBed;
  let driver: InMemoryDriver;

  beforeEach(() => {
    bed = new WorkerTestBed();
    driver = new InMemoryDriver();
  });
  afterEach(() => bed.destroy());

  /** The most driver operations of `operation` that were in progress at once. */
  function watchConcurrency(operation: 'create' | 'destroy'): () => number {
    let inFlight = 0;
    let peak = 0;
    const original = driver[operation].bind(driver) as (...args: unknown[]) => Promise<unknown>;
    (driver as unknown as Record<string, unknown>)[operation] = async (...args: unknown[]) => {
      peak = Math.max(peak, ++inFlight);
      try {
        return await original(...args);
      } finally {
        inFlight--;
      }
    };
    return () => peak;
  }

  it('runs one VM\'s operations in log order while another VM\'s create proceeds', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    driver.slowDown('create', 150);
    await bed.start(driver, 'worker-1', { concurrency: 4 });
    await bed.requestVm(a);
    await bed.requestVm(b);
    await bed.vm(a, { type: 'RequestVmDeletion' }); // while its machine is being made
    await bed.settle();
    // Both creates started before either ended; a's deletion waited for a's create.
    expect(driver.calls.slice(0, 2).sort()).toEqual([`create ${a}`, `create ${b}`].sort());
    expect(driver.calls.slice(2)).toEqual([`destroy ${a}`]);
    expect(await bed.types(Vm.stream(a))).toEqual(['VmCreationRequested', 'VmDeletionRequested', 'VmDeleted']);
    expect(await bed.types(Vm.stream(b))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted']);
    expect(await driver.status(a)).toBeNull();
  });

  it('takes a slot only once the VM\'s turn has come: with one slot, the VMs go in log order, each whole', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    driver.slowDown('create', 100);
    await bed.start(driver, 'worker-1', { concurrency: 1 });
    await bed.requestVm(a);
    await bed.requestVm(b);
    await bed.vm(a, { type: 'RequestVmDeletion' });
    await bed.settle();
    // a's create and (within the same reaction, the VM deleted meanwhile) its destroy, then b's
    // create; a's reaction to its deletion, queued behind b's, finds nothing left to do.
    expect(driver.calls).toEqual([`create ${a}`, `destroy ${a}`, `create ${b}`]);
  });

  it('runs at most the pool\'s size of machine operations at once, and every one of them', async () => {
    const vms = Array.from({ length: 7 }, () => randomUUID());
    driver.slowDown('create', 60);
    driver.slowDown('destroy', 30);
    const creates = watchConcurrency('create');
    const destroys = watchConcurrency('destroy');
    await bed.start(driver, 'worker-1', { concurrency: 3 });
    await Promise.all(vms.map((vm) => bed.requestVm(vm)));
    await bed.settle();
    expect(creates()).toBe(3);
    expect(driver.calls.sort()).toEqual(vms.map((vm) => `create ${vm}`).sort());
    driver.calls.length = 0;
    await Promise.all(vms.map((vm) => bed.vm(vm, { type: 'RequestVmDeletion' })));
    await bed.settle();
    expect(destroys()).toBe(3);
    expect(driver.calls.sort()).toEqual(vms.map((vm) => `destroy ${vm}`).sort());
    for (const vm of vms) expect(await bed.types(Vm.stream(vm))).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmDeletionRequested', 'VmDeleted']);
  });
});

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 20));
  expect(await condition()).toBe(true);
}
