import { randomUUID } from 'node:crypto';
import { Exec, type ExecOutput } from '@arbor/domain';
import { type ExecChunk, type ExecResult, type ExecSpec, InMemoryDriver } from '@arbor/hypervisor';
import { execsRunningHereSettled, OUTCOME_UNKNOWN } from './exec-runner';
import { WorkerTestBed } from './testing/worker-test-bed';

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
  let bed: WorkerTestBed;
  let driver: ChattyDriver;

  beforeEach(() => {
    bed = new WorkerTestBed();
    driver = new ChattyDriver();
  });
  afterEach(async () => {
    await bed.destroy();
    await execsRunningHereSettled();
  });

  const runningVm = async () => {
    const vm_id = randomUUID();
    await bed.requestVm(vm_id);
    await bed.settle();
    return vm_id;
  };
  const execEvents = (exec_id: string) => bed.store.readStream(Exec.stream(exec_id));
  const execCalls = () => driver.calls.filter((call) => call.startsWith('exec '));

  it('runs the command once and records start, output and exit, caused by the request', async () => {
    await bed.start(driver);
    const vm = await runningVm();
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['echo', 'hello']);
    await bed.settle();
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
    await bed.start(driver);
    const vm = await runningVm();
    await bed.requestExec(randomUUID(), vm, ['true']);
    await bed.settle();
    await bed.stop();
    bed.forgetCheckpoint();
    const head = await bed.store.headPosition();
    await bed.start(driver);
    await bed.settle();
    expect(execCalls()).toHaveLength(1);
    expect(await bed.store.headPosition()).toBe(head);
  });

  it('an exec cut off by a restart (started, no exit) is reported failed, never run again', async () => {
    const vm = await (async () => {
      await bed.start(driver);
      return runningVm();
    })();
    await bed.stop();
    // What a worker that died mid-run leaves behind: the start and some output, no exit.
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['sleep', '100']);
    await bed.exec(exec, { type: 'RecordExecStarted', now: new Date().toISOString() });
    await bed.exec(exec, { type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('partial') }], now: new Date().toISOString() });
    driver.calls.length = 0;
    await bed.start(driver);
    await bed.settle();
    const events = await execEvents(exec);
    expect(events.map((e) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecFailed']);
    expect(events[3].data).toMatchObject({ cursor: 2, reason: OUTCOME_UNKNOWN });
    expect(execCalls()).toEqual([]);
  });

  it('an exec requested but never started before a restart does run', async () => {
    await bed.start(driver);
    const vm = await runningVm();
    await bed.stop();
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['echo', 'late']);
    await bed.start(driver);
    await bed.settle();
    expect((await execEvents(exec)).map((e) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited']);
  });

  it('fails an exec on a dead VM without calling the driver', async () => {
    await bed.start(driver);
    const vm = await runningVm();
    await bed.vm(vm, { type: 'RecordVmDied', reason: 'gone' });
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['true']);
    await bed.settle();
    const events = await execEvents(exec);
    expect(events.map((e) => e.type)).toEqual(['ExecRequested', 'ExecFailed']);
    expect(events[1].data).toMatchObject({ reason: 'vm is dead' });
    expect(execCalls()).toEqual([]);
  });

  it('batches chatty output into fewer events, in order, with strictly increasing cursors', async () => {
    await bed.start(driver);
    const vm = await runningVm();
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['chatty']);
    await bed.settle();
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
