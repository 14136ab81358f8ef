import { isSealed, type AggregateRepository } from '@arbor/application';
import { Exec, isExecFinished, Vm, type ExecRequested } from '@arbor/domain';
import type { ExecChunk, ExecResult, HypervisorDriver } from '@arbor/hypervisor';
import { type Log, silentLog } from '@arbor/observability';
import { DEFAULT_BATCHING, ExecOutputBatcher, type ExecOutputBatcherOptions } from './exec-output-batcher';
import { ExecRecorder } from './exec-recorder';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';

/**
 * Execs running in this process, by stream key. Process-wide on purpose: a worker stopped and
 * started again in the same process (embedded restarts, tests) must find its predecessor's execs
 * still running, not report them lost.
 */
const runningHere = new Map<string, Promise<void>>();

/** Resolves when every exec this process runs has finished (tests, graceful shutdown). */
export async function execsRunningHereSettled(): Promise<void> {
  while (runningHere.size) await Promise.allSettled([...runningHere.values()]);
}

export const EXEC_LOST_REASON = 'the worker restarted while the command ran: it was not run again, and its exit is unknown';

/** The default output cap (ARBOR_EXEC_OUTPUT_MAX_BYTES). */
export const DEFAULT_EXEC_OUTPUT_MAX_BYTES = 32 * 1024 * 1024;

export interface ExecRunnerOptions {
  batching?: ExecOutputBatcherOptions;
  /** How long an exec waits for its VM to finish booting. */
  bootWaitMs?: number;
  /** The most output one exec records; past it the command is stopped. */
  outputMaxBytes?: number;
}

/**
 * Runs the command of an `exec-<key>` stream on the driver and records its output and exit as
 * events. The command runs in the background, so react() returns at once (true while it runs)
 * and other streams are not held up. At most once: ExecStarted is appended, with the exact
 * revision, before the driver call; an exec found started but not running in this process was
 * cut off by a restart and is recorded lost, never run a second time.
 *
 * The output is the guest's, so it is bounded: the driver reads no faster than the log takes it
 * (the batcher's backpressure), and past `outputMaxBytes` the command is stopped (the decider
 * keeps exactly that much and says so: ExecOutputLimitReached).
 */
export class ExecRunner implements StreamReactor {
  readonly aggregate = Exec;

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly placements: VmPlacements,
    private readonly log: Log = silentLog,
    private readonly options: ExecRunnerOptions = {},
  ) {}

  async react(key: string): Promise<boolean> {
    if (runningHere.has(key)) return true;
    const exec = await ExecRecorder.load(this.aggregates, key);
    if (!exec || isExecFinished(exec.state) || runningHere.has(key)) return runningHere.has(key);
    // Another host's VM: its worker runs the command (and reports one cut off by its restart).
    if (await this.placements.elsewhere(exec.state.request!.vm_id)) return false;
    if (exec.state.status === 'started') {
      this.log.warn(`worker: exec ${key} was cut off by a restart`);
      await exec.record({ type: 'RecordExecLost', reason: EXEC_LOST_REASON, now: new Date().toISOString() });
      return false;
    }
    const run = this.run(exec, exec.state.request!)
      .catch((error) => this.log.warn(`worker: exec ${key} stopped: ${(error as Error).message}`))
      .finally(() => runningHere.delete(key));
    runningHere.set(key, run);
    return true;
  }

  private async run(exec: ExecRecorder, request: ExecRequested['data']): Promise<void> {
    const now = () => new Date().toISOString();
    const unavailable = (await this.waitForRunningVm(request.vm_id)) ?? unreadableSecrets(request);
    if (unavailable) {
      await exec.record({ type: 'RecordExecFailed', reason: unavailable, now: now() });
      return;
    }
    // It was still booting, not yet placed, when the exec came: it may have gone to another host.
    if (await this.placements.elsewhere(request.vm_id)) return;
    // Another worker of this process got there first: it runs the command, not us.
    if (!(await exec.record({ type: 'RecordExecStarted', now: now() })).length) return;

    const limit_bytes = this.options.outputMaxBytes ?? DEFAULT_EXEC_OUTPUT_MAX_BYTES;
    const batcher = new ExecOutputBatcher((chunks) => exec.record({ type: 'RecordExecOutput', chunks, limit_bytes, now: now() }), this.options.batching ?? DEFAULT_BATCHING);
    const stop = new AbortController();
    let received = 0;
    // One byte past the limit reaches the decider (it then records the limit's note); the rest is dropped here.
    const onChunk = (chunk: ExecChunk) => {
      if (received > limit_bytes) return undefined;
      const data = chunk.data.subarray(0, limit_bytes + 1 - received);
      received += data.length;
      const wait = batcher.push({ stream: chunk.stream, data });
      if (received > limit_bytes) stop.abort();
      return wait;
    };
    let result: ExecResult;
    try {
      const spec = { argv: request.command, env: request.env ?? undefined, working_dir: request.working_dir ?? undefined, stdin: request.stdin ?? undefined, timeout_secs: request.timeout_secs, signal: stop.signal };
      result = await this.driver.exec(request.vm_id, spec, onChunk);
    } catch (error) {
      await batcher.close();
      await exec.record({ type: 'RecordExecFailed', reason: (error as Error).message, now: now() });
      return;
    }
    await batcher.close();
    await exec.record({ type: 'RecordExecExited', exit_code: result.exit_code, now: now() });
  }

  /** Waits out a boot; returns why the command cannot run, or null once the VM is running. */
  private async waitForRunningVm(vm_id: string): Promise<string | null> {
    const deadline = Date.now() + (this.options.bootWaitMs ?? 300_000);
    for (;;) {
      const { state } = await this.aggregates.load(Vm, vm_id);
      switch (state.lifecycle) {
        case 'running':
        case 'paused': // the driver refuses a paused machine with a reason that says so
          return null;
        case 'booting':
          if (Date.now() > deadline) return 'vm did not finish booting in time';
          await new Promise((r) => setTimeout(r, 50));
          continue;
        case 'dead':
          return 'vm is dead';
        case 'deleting':
        case 'deleted':
          return 'vm was deleted';
        case 'none':
          return 'vm not found';
      }
    }
  }
}

/** Why the request cannot run as asked: its stdin or env was sealed with a key shredded since. */
function unreadableSecrets(request: ExecRequested['data']): string | null {
  const sealed = [...(isSealed(request.stdin) ? ['stdin'] : []), ...Object.entries(request.env ?? {}).filter(([, value]) => isSealed(value)).map(([name]) => `env ${name}`)];
  return sealed.length ? `the exec's ${sealed.join(', ')} can no longer be read: the org's secrets key was deleted` : null;
}
