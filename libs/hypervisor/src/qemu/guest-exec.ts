import { randomUUID } from 'node:crypto';
import type { ExecChunkHandler, ExecResult, ExecSpec } from '../hypervisor-driver.port';
import { KIT_PATHS } from '../kit/kit-paths';
import { OrderedOutputDecoder, orderedExecArgv } from '../ordered-output';
import type { GuestAgentClient } from './guest-agent-client';
import { exitCodeOf, GUEST_DEFAULT_ENV, runInGuest, waitForGuestExit } from './guest-command';

/** Bytes asked for per guest-file-read (the agent allows up to 48 MiB; base64 grows it by 4/3). */
const READ_CHUNK = 1 << 20;

/** A command stopped through ExecSpec.signal was killed: 128 + SIGKILL. */
const STOPPED_EXIT_CODE = 137;

/** How long a stopped command's exit is waited for before the exec ends without it. */
const STOP_GRACE_MS = 10_000;

class GaveUpWaiting extends Error {}

/**
 * Runs argv in the guest with guest-exec, under the guest kit's ordered-exec helper
 * (ordered-output.ts): it sets the environment like a login (GUEST_DEFAULT_ENV, then
 * /etc/environment, then spec.env) and the working directory, and appends stdout and stderr as
 * records, in the order the command wrote them, to one file in the guest's /run (tmpfs).
 * guest-exec returns output only when the process has ended, so for streaming the driver reads
 * what is new in that file between guest-exec-status polls (every 15-100 ms). The helper unlinks
 * the file at the end; the driver's open handle keeps it readable. What the helper itself prints
 * on stderr (it could not start) comes last, as stderr. A timeout is the helper's: it kills the
 * command and everything it started (exit code 124). While the consumer asks to wait
 * (ExecChunkHandler) the file is not read further; once `signal` aborts, nothing more is read, the
 * command's process tree is killed (the helper's kill-tree) and its exit waited for (a while).
 * Nothing of the image is used but the command itself.
 */
export async function execInGuest(
  agent: GuestAgentClient,
  spec: ExecSpec,
  onChunk: ExecChunkHandler,
): Promise<ExecResult> {
  const path = `/run/arbor-exec-${randomUUID()}`;
  const handle = await agent.request<number>('guest-file-open', { path, mode: 'w+' });
  try {
    const [program, ...args] = orderedExecArgv({
      output: path,
      workingDir: spec.working_dir || '/',
      environmentFile: '/etc/environment',
      env: spec.env ?? {},
      argv: spec.argv,
      timeoutSecs: spec.timeout_secs,
    });
    const { pid } = await agent.request<{ pid: number }>('guest-exec', {
      path: program,
      arg: args,
      env: GUEST_DEFAULT_ENV,
      'capture-output': true,
      ...(spec.stdin !== undefined ? { 'input-data': Buffer.from(spec.stdin, 'utf8').toString('base64') } : {}),
    });
    const decoder = new OrderedOutputDecoder(onChunk);
    const drain = async () => {
      while (!spec.signal?.aborted) {
        // A read at end of file leaves stdio's sticky EOF flag set; a seek clears it.
        await agent.request('guest-file-seek', { handle, offset: 0, whence: 'cur' });
        const read = await agent.request<{ count: number; 'buf-b64'?: string }>('guest-file-read', { handle, count: READ_CHUNK });
        if (read.count > 0) await decoder.push(Buffer.from(read['buf-b64'] ?? '', 'base64'));
        if (read.count < READ_CHUNK) break;
      }
    };
    let stopDeadline: number | null = null;
    const stopOrDrain = async () => {
      if (!spec.signal?.aborted) return drain();
      if (stopDeadline === null) {
        stopDeadline = Date.now() + STOP_GRACE_MS;
        await runInGuest(agent, [KIT_PATHS.helper, 'kill-tree', String(pid)]).catch(() => undefined);
      }
      if (Date.now() > stopDeadline) throw new GaveUpWaiting();
    };
    // Status first, then drain: once the status says exited, that drain has read everything.
    let status;
    try {
      status = await waitForGuestExit(agent, pid, stopOrDrain);
    } catch (error) {
      if (error instanceof GaveUpWaiting) return { exit_code: STOPPED_EXIT_CODE };
      throw error;
    }
    if (spec.signal?.aborted) return { exit_code: STOPPED_EXIT_CODE };
    decoder.end();
    const ownErrors = Buffer.from(status['err-data'] ?? '', 'base64');
    if (ownErrors.length > 0) onChunk({ stream: 'stderr', data: ownErrors });
    return { exit_code: exitCodeOf(status) };
  } finally {
    await agent.request('guest-file-close', { handle }).catch(() => undefined);
  }
}
