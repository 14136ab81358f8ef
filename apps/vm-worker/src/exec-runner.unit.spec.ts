import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { execDecider, streams, VM_CONFIG_DEFAULTS, vmDecider, type ExecCommand, type ExecOutput, type VmCommand } from '../../../libs/domain/src';
import { handleCommand } from '../../../libs/application/src/aggregate-repository';
import { newCommandContext } from '../../../libs/application/src/command-context';
import { InMemoryEventStore } from '../../../libs/event-store/src/in-memory/in-memory-event-store';
import type { EventStore } from '../../../libs/event-store/src/event-store.port';
import type { ExecChunk, ExecResult, ExecSpec } from '../../../libs/hypervisor/src/hypervisor-driver.port';
import { InMemoryDriver } from '../../../libs/hypervisor/src/memory/in-memory-driver';
import { execsRunningHereSettled, OUTCOME_UNKNOWN } from './exec-runner';
import { VmWorker } from './vm-worker';

/** The in-memory driver, but its exec writes many small chunks over time, like a chatty command. */
class ChattyDriver extends InMemoryDriver {
  override async exec(vm_id: string, spec: ExecSpec, onChunk: (chunk: ExecChunk) => void): Promise<ExecResult> {
    if (spec.argv[0] !== 'chatty') return super.exec(vm_id, spec, onChunk);
    this.calls.push(`exec ${vm_id}`);
    for (let i = 0; i < 200; i++) {
      onChunk({ stream: i % 50 === 49 ? 'stderr' : 'stdout', data: Buffer.from(`${i};`) });
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    return { exit_code: 3 };
  }
}

/** The exec runner through the real worker: output and exit as events, at most one run per exec. */
describe('exec runner (worker, in-memory driver)', () => {
  let store: EventStore;
  let driver: ChattyDriver;
  let dir: string;
  let worker: VmWorker | null;

  beforeEach(() => {
    store = new InMemoryEventStore();
    driver = new ChattyDriver();
    dir = mkdtempSync(join(tmpdir(), 'arbor-exec-'));
    worker = null;
  });
  afterEach(async () => {
    await worker?.stop();
    await execsRunningHereSettled();
    rmSync(dir, { recursive: true, force: true });
  });

  const startWorker = async () => {
    worker = new VmWorker(store, driver, { stateFile: join(dir, 'worker.json'), resyncIntervalMs: 0 });
    await worker.start();
  };
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await worker!.idle();
      await execsRunningHereSettled();
    }
  };
  const context = () => newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
  const vmCommand = (vm_id: string, cmd: VmCommand) => handleCommand(store, streams.vm(vm_id), vmDecider, cmd, context());
  const execCommand = (exec_id: string, cmd: ExecCommand) => handleCommand(store, streams.exec(exec_id), execDecider, cmd, context());
  const runningVm = async () => {
    const vm_id = randomUUID();
    await vmCommand(vm_id, { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: new Date().toISOString() });
    await settle();
    return vm_id;
  };
  const requestExec = (exec_id: string, vm_id: string, command: string[]) =>
    execCommand(exec_id, { type: 'RequestExec', exec_id, vm_id, org_id: 'org-1', command, env: null, working_dir: null, stdin: null, timeout_secs: 0, now: new Date().toISOString() });
  const execEvents = (exec_id: string) => store.readStream(streams.exec(exec_id));
  const execCalls = () => driver.calls.filter((call) => call.startsWith('exec '));

  it('runs the command once and records start, output and exit, caused by the request', async () => {
    await startWorker();
    const vm = await runningVm();
    const exec = randomUUID();
    await requestExec(exec, vm, ['echo', 'hello']);
    await settle();
    const events = await execEvents(exec);
    expect(events.map((e) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited']);
    expect(events[2].data).toMatchObject({ exec_id: exec, vm_id: vm, cursor: 1, stream: 'stdout', data_b64: Buffer.from('echo hello\n').toString('base64') });
    expect(events[3].data).toMatchObject({ cursor: 2, exit_code: 0 });
    for (const outcome of events.slice(1)) {
      expect(outcome.metadata).toMatchObject({ causation_id: events[0].id, correlation_id: events[0].metadata.correlation_id, org_id: 'org-1', actor_key_id: null });
    }
    expect(execCalls()).toEqual([`exec ${vm}`]);
  });

  it('replaying the log (checkpoint lost) runs no exec a second time and appends nothing', async () => {
    await startWorker();
    const vm = await runningVm();
    await requestExec(randomUUID(), vm, ['true']);
    await settle();
    await worker!.stop();
    rmSync(join(dir, 'worker.json'));
    const head = await store.headPosition();
    await startWorker();
    await settle();
    expect(execCalls()).toHaveLength(1);
    expect(await store.headPosition()).toBe(head);
  });

  it('an exec cut off by a restart (started, no exit) is reported failed, never run again', async () => {
    const vm = await (async () => {
      await startWorker();
      return runningVm();
    })();
    await worker!.stop();
    // What a worker that died mid-run leaves behind: the start and some output, no exit.
    const exec = randomUUID();
    await requestExec(exec, vm, ['sleep', '100']);
    await execCommand(exec, { type: 'RecordExecStarted', now: new Date().toISOString() });
    await execCommand(exec, { type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('partial') }], now: new Date().toISOString() });
    driver.calls.length = 0;
    await startWorker();
    await settle();
    const events = await execEvents(exec);
    expect(events.map((e) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecFailed']);
    expect(events[3].data).toMatchObject({ cursor: 2, reason: OUTCOME_UNKNOWN });
    expect(execCalls()).toEqual([]);
  });

  it('an exec requested but never started before a restart does run', async () => {
    await startWorker();
    const vm = await runningVm();
    await worker!.stop();
    const exec = randomUUID();
    await requestExec(exec, vm, ['echo', 'late']);
    await startWorker();
    await settle();
    expect((await execEvents(exec)).map((e) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited']);
  });

  it('fails an exec on a dead VM without calling the driver', async () => {
    await startWorker();
    const vm = await runningVm();
    await vmCommand(vm, { type: 'RecordVmDied', reason: 'gone' });
    const exec = randomUUID();
    await requestExec(exec, vm, ['true']);
    await settle();
    const events = await execEvents(exec);
    expect(events.map((e) => e.type)).toEqual(['ExecRequested', 'ExecFailed']);
    expect(events[1].data).toMatchObject({ reason: 'vm is dead' });
    expect(execCalls()).toEqual([]);
  });

  it('batches chatty output into fewer events, in order, with strictly increasing cursors', async () => {
    await startWorker();
    const vm = await runningVm();
    const exec = randomUUID();
    await requestExec(exec, vm, ['chatty']);
    await settle();
    const events = await execEvents(exec);
    const outputs = events.filter((e) => e.type === 'ExecOutput').map((e) => e.data as ExecOutput['data']);
    expect(outputs.length).toBeLessThan(100);
    expect(outputs.map((o) => o.cursor)).toEqual(outputs.map((_, i) => i + 1));
    const text = (stream: string) => outputs.filter((o) => o.stream === stream).map((o) => Buffer.from(o.data_b64, 'base64').toString()).join('');
    const expected = (stream: string) => Array.from({ length: 200 }, (_, i) => i).filter((i) => (i % 50 === 49) === (stream === 'stderr')).map((i) => `${i};`).join('');
    expect(text('stdout')).toBe(expected('stdout'));
    expect(text('stderr')).toBe(expected('stderr'));
    expect(events[events.length - 1].data).toMatchObject({ exit_code: 3, cursor: outputs.length + 1 });
  });
});
