import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { streams, VM_CONFIG_DEFAULTS, vmDecider, type VmCommand } from '../../../libs/domain/src';
import { handleCommand } from '../../../libs/application/src/aggregate-repository';
import { newCommandContext } from '../../../libs/application/src/command-context';
import { InMemoryEventStore } from '../../../libs/event-store/src/in-memory/in-memory-event-store';
import type { EventStore } from '../../../libs/event-store/src/event-store.port';
import { InMemoryDriver } from '../../../libs/hypervisor/src/memory/in-memory-driver';
import { VmWorker } from './vm-worker';

/**
 * The worker as a level-triggered controller: given the log and the host, it makes exactly the
 * driver calls needed, reports outcomes as events, and does nothing on a replay.
 */
describe('vm-worker reconcile', () => {
  let store: EventStore;
  let driver: InMemoryDriver;
  let dir: string;
  let worker: VmWorker | null;

  beforeEach(() => {
    store = new InMemoryEventStore();
    driver = new InMemoryDriver();
    dir = mkdtempSync(join(tmpdir(), 'arbor-worker-'));
    worker = null;
  });
  afterEach(async () => {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const startWorker = async () => {
    worker = new VmWorker(store, driver, { stateFile: join(dir, 'worker.json'), resyncIntervalMs: 0 });
    await worker.start();
    return worker;
  };
  const restartWorker = async () => {
    await worker!.stop();
    return startWorker();
  };
  const command = (vm_id: string, cmd: VmCommand) =>
    handleCommand(store, streams.vm(vm_id), vmDecider, cmd, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }));
  const requestVm = (vm_id: string) =>
    command(vm_id, { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: { A: '1' }, ip: 'fd00::1', now: new Date().toISOString() });
  const types = async (vm_id: string) => (await store.readStream(streams.vm(vm_id))).map((e) => e.type);
  const settle = async () => {
    // Let the subscription deliver, then wait for every reconcile it started.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await worker!.idle();
    }
  };

  it('creates the machine for a requested VM and reports it booted, caused by the intent', async () => {
    const vm = randomUUID();
    await startWorker();
    await requestVm(vm);
    await settle();
    expect(driver.calls).toEqual([`create ${vm}`]);
    const events = await store.readStream(streams.vm(vm));
    expect(events.map((e) => e.type)).toEqual(['VmCreationRequested', 'VmBooted']);
    expect(events[1].metadata.causation_id).toBe(events[0].id);
    expect(events[1].metadata.correlation_id).toBe(events[0].metadata.correlation_id);
    expect(events[1].metadata.org_id).toBe('org-1');
  });

  it('pauses, resumes and deletes with exactly one driver call each', async () => {
    const vm = randomUUID();
    await startWorker();
    await requestVm(vm);
    await settle();
    await command(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await settle();
    await command(vm, { type: 'RequestVmStateChange', target: 'Running' });
    await settle();
    await command(vm, { type: 'RequestVmDeletion' });
    await settle();
    expect(driver.calls).toEqual([`create ${vm}`, `pause ${vm}`, `resume ${vm}`, `destroy ${vm}`]);
    expect(await types(vm)).toEqual([
      'VmCreationRequested', 'VmBooted', 'VmPauseRequested', 'VmPaused', 'VmResumeRequested', 'VmResumed', 'VmDeletionRequested', 'VmDeleted',
    ]);
  });

  it('replaying the whole log after losing its checkpoint makes no driver call and appends nothing', async () => {
    const vm = randomUUID();
    await startWorker();
    await requestVm(vm);
    await settle();
    await command(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await settle();
    await worker!.stop();
    rmSync(join(dir, 'worker.json'));
    driver.calls.length = 0;
    const head = await store.headPosition();
    await startWorker();
    await settle();
    expect(driver.calls).toEqual([]);
    expect(await store.headPosition()).toBe(head);
  });

  it('a machine created just before a crash is adopted, not created twice', async () => {
    const vm = randomUUID();
    await requestVm(vm);
    driver.adopt(vm); // the driver created it; the outcome was never appended
    await startWorker();
    await settle();
    expect(driver.calls).toEqual([]);
    expect(await types(vm)).toEqual(['VmCreationRequested', 'VmBooted']);
  });

  it('on start, reports VMs whose machine is gone as dead and destroys orphans', async () => {
    const vm = randomUUID();
    const orphan = randomUUID();
    await startWorker();
    await requestVm(vm);
    await settle();
    await worker!.stop();
    driver.lose(vm); // e.g. the host rebooted
    driver.adopt(orphan); // a machine the log never asked for
    driver.calls.length = 0;
    await startWorker();
    await settle();
    expect(driver.calls).toEqual([`destroy ${orphan}`]);
    expect(await types(vm)).toEqual(['VmCreationRequested', 'VmBooted', 'VmDied']);
    expect(await driver.status(orphan)).toBeNull();
  });

  it('a failed create is cleaned up: reported with its reason, the VM deleted, nothing left behind', async () => {
    const vm = randomUUID();
    driver.failNext('create', 'no space left on device');
    await startWorker();
    await requestVm(vm);
    await settle();
    expect(driver.calls).toEqual([`create ${vm}`, `destroy ${vm}`]);
    const events = await store.readStream(streams.vm(vm));
    expect(events.map((e) => e.type)).toEqual(['VmCreationRequested', 'VmBootFailed', 'VmDeleted']);
    expect((events[1].data as { reason: string }).reason).toBe('no space left on device');
    expect(events[1].metadata.causation_id).toBe(events[0].id);
    expect(await driver.list()).toEqual([]);
  });

  it('a failed pause is reported and the VM stays running', async () => {
    const vm = randomUUID();
    await startWorker();
    await requestVm(vm);
    await settle();
    driver.failNext('pause', 'freezer busy');
    await command(vm, { type: 'RequestVmStateChange', target: 'Paused' });
    await settle();
    expect(await types(vm)).toEqual(['VmCreationRequested', 'VmBooted', 'VmPauseRequested', 'VmOperationFailed']);
    expect(await driver.status(vm)).toBe('running');
  });

  it('resumes following the log after a restart from its checkpoint', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await startWorker();
    await requestVm(a);
    await settle();
    await restartWorker();
    await requestVm(b);
    await settle();
    expect(driver.calls).toEqual([`create ${a}`, `create ${b}`]);
  });
});
