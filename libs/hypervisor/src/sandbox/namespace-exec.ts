import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { ExecChunk, ExecResult, ExecSpec } from '../hypervisor-driver.port';
import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { killQuietly } from '../host/kill-process';
import { OrderedOutputDecoder, orderedExecArgv } from '../ordered-output';
import { inCgroups } from './enter-cgroups';

const TIMEOUT_EXIT_CODE = 124;

/**
 * ExecSpec, but stdin may be bytes (the driver's own file writes pass binary content through it),
 * and a KEY=VALUE file in the machine may set the environment before `env` does.
 */
export type NamespaceExecSpec = Omit<ExecSpec, 'stdin'> & { stdin?: string | Buffer; environmentFile?: string };

export interface NamespaceExecTarget {
  initPid: number;
  cgroupProcsFiles: string[];
}

/**
 * Runs argv inside the machine: joins its cgroups, then `nsenter` into its namespaces and root,
 * where the machine's perl runs the ordered-exec program (ordered-output.ts): it builds the
 * environment (DEFAULT_EXEC_ENV, then the environment file as the machine has it, then spec.env;
 * nothing of the host's, and the file is read inside the machine, so a symlink resolves there),
 * enters the working directory (default /) and runs argv without a shell interpreting it, with
 * stdout and stderr chunks in the order the command wrote them. The exec ends when the command
 * exits.
 */
export function execInNamespaces(
  target: NamespaceExecTarget,
  spec: NamespaceExecSpec,
  onChunk: (chunk: ExecChunk) => void,
): Promise<ExecResult> {
  if (spec.argv.length === 0) return Promise.reject(new Error('exec needs a non-empty argv'));
  // Plain `--wd` starts in the init's directory (the machine's /); `--wd=DIR` would resolve DIR
  // on the host, outside the machine's root. The working directory is entered inside instead.
  const nsenter = ['nsenter', `--target=${target.initPid}`, '--mount', '--uts', '--ipc', '--pid', '--root', '--wd'];
  const inMachine = orderedExecArgv({
    output: '-',
    workingDir: spec.working_dir || '/',
    environmentFile: spec.environmentFile ?? '',
    env: spec.env ?? {},
    argv: spec.argv,
  });
  const argv = inCgroups(target.cgroupProcsFiles, [...nsenter, ...inMachine]);

  return new Promise((resolve, reject) => {
    // Own process group, so a timeout kills everything the command started, not just nsenter.
    const child = spawn(argv[0], argv.slice(1), {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...DEFAULT_EXEC_ENV }, // nsenter's, and so the program's starting environment
    });
    const killGroup = () => killQuietly(-child.pid!);
    let timedOut = false;
    let failure: Error | null = null;
    const timer =
      spec.timeout_secs && spec.timeout_secs > 0
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, spec.timeout_secs * 1000)
        : undefined;
    // stdout carries the command's records; stderr only what nsenter or perl itself says.
    const decoder = new OrderedOutputDecoder(onChunk);
    child.stdout.on('data', (data: Buffer) => {
      if (failure) return;
      try {
        decoder.push(data);
      } catch (error) {
        failure = error as Error;
        killGroup();
      }
    });
    child.stderr.on('data', (data: Buffer) => onChunk({ stream: 'stderr', data }));
    child.stdin.on('error', () => undefined); // the command may exit without reading its stdin
    child.stdin.end(spec.stdin ?? '');
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // 'close' (not 'exit'): every byte of output has been delivered by then.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (!failure) decoder.end();
      if (failure) reject(failure);
      else if (timedOut) resolve({ exit_code: TIMEOUT_EXIT_CODE });
      else if (signal) resolve({ exit_code: 128 + (constants.signals[signal] ?? 0) });
      else resolve({ exit_code: code ?? 1 });
    });
  });
}
