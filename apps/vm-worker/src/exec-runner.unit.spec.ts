import { randomUUID } from 'node:crypto';
import { Exec, EXEC_OUTPUT_LIMIT_EXIT_CODE, execKey, execOutputLimitNote, type ExecOutput } from '@arbor/domain';
import { type ExecChunkHandler, type ExecResult, type ExecSpec, InMemoryDriver } from '@arbor/hypervisor';
import { loadResourceSettings } from '@arbor/application';
import { EXEC_LOST_REASON, execsRunningHereSettled } from './exec-runner';
import { WorkerTestBed } from './testing/worker-test-bed';

/** The in-memory driver, but its exec writes many small chunks over time, like a chatty command. */
class ChattyDriver extends InMemoryDriver {
  override async exec(vm_id: string, spec: ExecSpec, onChunk: ExecChunkHandler): Promise<ExecResult> {
    if (spec.argv[0] === 'endless') return this.endless(vm_id, spec, onChunk);
    if (spec.argv[0] !== 'chatty') return super.exec(vm_id, spec, onChunk);
    this.calls.push(`exec ${vm_id}`);
    for (let i = 0; i < 200; i++) {
      onChunk({ stream: i % 50 === 49 ? 'stderr' : 'stdout', data: Buffer.from(`${i};`) });
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    return { exit_code: 3 };
  }

  /** `yes` at full speed: waits only when asked to (backpressure), stops only when aborted. */
  private async endless(vm_id: string, spec: ExecSpec, onChunk: ExecChunkHandler): Promise<ExecResult> {
    this.calls.push(`exec ${vm_id}`);
    const block = Buffer.alloc(16 * 1024, 'y');
    while (!spec.signal?.aborted) {
      const wait = onChunk({ stream: 'stdout', data: block });
      if (wait) await wait;
      else await new Promise((r) => setImmediate(r));
    }
    return { exit_code: 137 };
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
  const execEvents = (exec_id: string) => bed.store.readStream(Exec.stream(execKey('org-1', exec_id)));
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

  it('an exec cut off by a restart (started, no exit) is recorded lost, never run again', async () => {
    const vm = await (async () => {
      await bed.start(driver);
      return runningVm();
    })();
    await bed.stop();
    // What a worker that died mid-run leaves behind: the start and some output, no exit.
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['sleep', '100']);
    await bed.exec(exec, { type: 'RecordExecStarted', now: new Date().toISOString() });
    await bed.exec(exec, { type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('partial') }], limit_bytes: 1 << 20, now: new Date().toISOString() });
    driver.calls.length = 0;
    await bed.start(driver);
    await bed.settle();
    const events = await execEvents(exec);
    expect(events.map((e) => e.type)).toEqual(['ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecLost']);
    expect(events[3].data).toMatchObject({ cursor: 2, reason: EXEC_LOST_REASON });
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

  it('stops a command past the output limit: keeps exactly the limit, says so, exits 137; the driver never ran ahead', async () => {
    const limit = 1024 * 1024;
    await bed.start(driver, 'worker-1', { resources: { ...loadResourceSettings({}), execOutputMaxBytes: limit } });
    const vm = await runningVm();
    const exec = randomUUID();
    await bed.requestExec(exec, vm, ['endless']);
    await bed.settle();
    const events = await execEvents(exec);
    const types = events.map((e) => e.type);
    expect(types.slice(-3)).toEqual(['ExecOutputLimitReached', 'ExecOutput', 'ExecExited']);
    const outputs = events.filter((e) => e.type === 'ExecOutput').map((e) => e.data as ExecOutput['data']);
    const bytes = outputs.slice(0, -1).reduce((sum, o) => sum + Buffer.byteLength(o.data_b64, 'base64'), 0);
    expect(bytes).toBe(limit);
    expect(Buffer.from(outputs[outputs.length - 1].data_b64, 'base64').toString()).toBe(execOutputLimitNote(limit));
    expect(outputs[outputs.length - 1].stream).toBe('stderr');
    expect(Math.max(...outputs.map((o) => Buffer.byteLength(o.data_b64, 'base64')))).toBeLessThanOrEqual(64 * 1024);
    expect(events[events.length - 1].data).toMatchObject({ exit_code: EXEC_OUTPUT_LIMIT_EXIT_CODE });
    expect(events.find((e) => e.type === 'ExecOutputLimitReached')!.data).toMatchObject({ limit_bytes: limit });
  });
});
