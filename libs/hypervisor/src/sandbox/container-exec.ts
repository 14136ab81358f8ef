import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { constants } from 'node:os';
import { isPending, type ExecChunkHandler, type ExecResult, type ExecSpec } from '../hypervisor-driver.port';
import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { killQuietly } from '../host/kill-process';
import { OrderedOutputDecoder, orderedExecArgv } from '../ordered-output';
import type { OciRuntime } from './oci-runtime';

const TIMEOUT_EXIT_CODE = 124;
/** A command stopped through ExecSpec.signal was killed: 128 + SIGKILL. */
const STOPPED_EXIT_CODE = 137;
/** Node fires a timer longer than 2^31 - 1 ms at once: a longer timeout (24.8 days) waits that long. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The process group of `pid`, as the host sees it (field 5 of /proc/<pid>/stat); null once it is gone. */
async function processGroupOf(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const group = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  return Number.isInteger(group) ? group : null;
}

/**
 * ExecSpec, but stdin may be bytes (the driver's own file writes pass binary content through it),
 * and a KEY=VALUE file in the machine may set the environment before `env` does.
 */
export type ContainerExecSpec = Omit<ExecSpec, 'stdin'> & { stdin?: string | Buffer; environmentFile?: string };

export interface ContainerExecTarget {
  runtime: OciRuntime;
  /** The machine's container id (its vm id). */
  id: string;
  /** A host directory of the machine's for the exec's pid file. */
  scratchDir: string;
}

/**
 * Runs argv inside the machine through the runtime's `exec`, so the process gets exactly the machine's
 * confinement (user, PID, mount, IPC, UTS and cgroup namespaces, cgroups, capabilities, seccomp,
 * no_new_privs), and there the guest kit's helper runs the ordered exec (ordered-output.ts):
 * it builds the environment (DEFAULT_EXEC_ENV, then the environment file as the machine has it,
 * then spec.env; nothing of the host's, and the file is read inside the machine, so a symlink
 * resolves there), enters the working directory (default /) and runs argv without a shell
 * interpreting it, with stdout and stderr chunks in the order the command wrote them. The exec
 * ends when the command exits. While the consumer asks to wait (ExecChunkHandler), the runtime's pipes
 * are not read, so the command's writes block; once `signal` aborts, the command is killed and
 * whatever it still wrote is dropped.
 */
export function execInContainer(
  target: ContainerExecTarget,
  spec: ContainerExecSpec,
  onChunk: ExecChunkHandler,
): Promise<ExecResult> {
  if (spec.argv.length === 0) return Promise.reject(new Error('exec needs a non-empty argv'));
  const inMachine = orderedExecArgv({
    output: '-',
    workingDir: spec.working_dir || '/',
    environmentFile: spec.environmentFile ?? '',
    env: spec.env ?? {},
    argv: spec.argv,
  });
  const pidFile = join(target.scratchDir, `exec-${randomBytes(8).toString('hex')}.pid`);
  const argv = target.runtime.execArgv(target.id, pidFile, inMachine);

  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: DEFAULT_EXEC_ENV.PATH },
    });
    // The runtime puts the process in a session of its own in the machine (runc makes it the
    // session leader; crun a process of its own that forks it, then exits): that process group
    // holds everything the command started, and killing the runtime alone would leave it running.
    const killAll = async () => {
      const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
      // Its group read while it lives; once gone, its pid names the group (runc's leader).
      const group = pid > 1 ? ((await processGroupOf(pid)) ?? pid) : 0;
      if (group > 1) killQuietly(-group);
      killQuietly(-child.pid!);
    };
    let timedOut = false;
    let stopped = false;
    let failure: Error | null = null;
    const timer =
      spec.timeout_secs && spec.timeout_secs > 0
        ? setTimeout(() => {
            timedOut = true;
            void killAll();
          }, Math.min(spec.timeout_secs * 1000, LONGEST_TIMER_MS))
        : undefined;
    const outputs = [child.stdout, child.stderr];
    // Backpressure: while the consumer digests, neither pipe is read (the command's writes block).
    let waiting = 0;
    const hold = (wait: unknown) => {
      if (!isPending(wait)) return;
      if (waiting++ === 0) outputs.forEach((stream) => stream.pause());
      const resume = () => {
        if (--waiting === 0 && !stopped) outputs.forEach((stream) => stream.resume());
      };
      wait.then(resume, resume);
    };
    const stop = () => {
      stopped = true;
      outputs.forEach((stream) => stream.resume()); // drained and dropped until the pipes close
      void killAll();
    };
    if (spec.signal?.aborted) stop();
    spec.signal?.addEventListener('abort', stop, { once: true });
    // stdout carries the command's records; stderr only what the runtime or the guest helper itself says.
    const decoder = new OrderedOutputDecoder(onChunk);
    child.stdout.on('data', (data: Buffer) => {
      if (failure || stopped) return;
      try {
        hold(decoder.push(data));
      } catch (error) {
        failure = error as Error;
        outputs.forEach((stream) => stream.resume());
        void killAll();
      }
    });
    child.stderr.on('data', (data: Buffer) => {
      if (!stopped) hold(onChunk({ stream: 'stderr', data }));
    });
    child.stdin.on('error', () => undefined); // the command may exit without reading its stdin
    child.stdin.end(spec.stdin ?? '');
    const settle = async (outcome: () => void) => {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', stop);
      // A process that outlived the runtime (killed on timeout) must not outlive the exec either.
      if (timedOut || failure || stopped) await killAll();
      await rm(pidFile, { force: true });
      outcome();
    };
    child.once('error', (error) => void settle(() => reject(error)));
    // 'close' (not 'exit'): every byte of output has been delivered by then.
    child.once('close', (code, signal) => {
      void settle(() => {
        if (!failure && !stopped) decoder.end();
        if (failure) reject(failure);
        else if (stopped) resolve({ exit_code: STOPPED_EXIT_CODE });
        else if (timedOut) resolve({ exit_code: TIMEOUT_EXIT_CODE });
        else if (signal) resolve({ exit_code: 128 + (constants.signals[signal] ?? 0) });
        else resolve({ exit_code: code ?? 1 });
      });
    });
  });
}
