import { isSealed, type AggregateRepository } from '@arbor/application';
import { Exec, isExecFinished, Vm, type ExecRequested } from '@arbor/domain';
import type { ExecResult, HypervisorDriver } from '@arbor/hypervisor';
import { type Log, silentLog } from '@arbor/observability';
import { DEFAULT_BATCHING, ExecOutputBatcher, type ExecOutputBatcherOptions } from './exec-output-batcher';
import { ExecRecorder } from './exec-recorder';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';

/**
 * Execs running in this process, by id. Process-wide on purpose: a worker stopped and started
 * again in the same process (embedded restarts, tests) must find its predecessor's execs still
 * running, not report them lost.
 */
const runningHere = new Map<string, Promise<void>>();

/** Resolves when every exec this process runs has finished (tests, graceful shutdown). */
export async function execsRunningHereSettled(): Promise<void> {
  while (runningHere.size) await Promise.allSettled([...runningHere.values()]);
}

export const OUTCOME_UNKNOWN = 'the worker restarted while the command ran; its outcome is unknown';

export interface ExecRunnerOptions {
  batching?: ExecOutputBatcherOptions;
  /** How long an exec waits for its VM to finish booting. */
  bootWaitMs?: number;
}

/**
 * Runs the command of an `exec-<id>` stream on the driver and records its output and exit as
 * events. The command runs in the background, so react() returns at once (true while it runs)
 * and other streams are not held up. At most once: ExecStarted is appended, with the exact
 * revision, before the driver call; an exec found started but not running in this process was
 * cut off by a restart and is reported failed, never run a second time.
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

  async react(exec_id: string): Promise<boolean> {
    if (runningHere.has(exec_id)) return true;
    const exec = await ExecRecorder.load(this.aggregates, exec_id);
    if (!exec || isExecFinished(exec.state) || runningHere.has(exec_id)) return runningHere.has(exec_id);
    // Another host's VM: its worker runs the command (and reports one cut off by its restart).
    if (await this.placements.elsewhere(exec.state.request!.vm_id)) return false;
    if (exec.state.status === 'started') {
      this.log.warn(`worker: exec ${exec_id} was cut off by a restart`);
      await exec.record({ type: 'RecordExecFailed', reason: OUTCOME_UNKNOWN, now: new Date().toISOString() });
      return false;
    }
    const run = this.run(exec, exec.state.request!)
      .catch((error) => this.log.warn(`worker: exec ${exec_id} stopped: ${(error as Error).message}`))
      .finally(() => runningHere.delete(exec_id));
    runningHere.set(exec_id, run);
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

    const batcher = new ExecOutputBatcher((chunks) => exec.record({ type: 'RecordExecOutput', chunks, now: now() }), this.options.batching ?? DEFAULT_BATCHING);
    let result: ExecResult;
    try {
      result = await this.driver.exec(
        request.vm_id,
        {
          argv: request.command,
          env: request.env ?? undefined,
          working_dir: request.working_dir ?? undefined,
          stdin: request.stdin ?? undefined,
          timeout_secs: request.timeout_secs,
        },
        (chunk) => batcher.push(chunk),
      );
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
