import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { sleep } from '../host/sleep';
import type { GuestAgentClient } from './guest-agent-client';

export interface GuestCommandResult {
  exit_code: number;
  stdout: Buffer;
  stderr: Buffer;
}

/** What `guest-exec-status` reports once the process is gone. */
export interface GuestExecStatus {
  exited: boolean;
  exitcode?: number;
  signal?: number;
  'out-data'?: string;
  'err-data'?: string;
}

/** PATH and HOME for everything the driver runs in the guest (guest-exec's form); nothing of qemu-ga's own env. */
export const GUEST_DEFAULT_ENV = Object.entries(DEFAULT_EXEC_ENV).map(([key, value]) => `${key}=${value}`);

/** Shell convention for a process killed by a signal. */
export function exitCodeOf(status: GuestExecStatus): number {
  return status.exitcode ?? (status.signal !== undefined ? 128 + status.signal : 1);
}

/**
 * Polls guest-exec-status until the process exited: quickly at first (`quickRounds` polls 15 ms
 * apart), then every 100 ms. A poll is one agent round trip, a few milliseconds.
 */
export async function waitForGuestExit(agent: GuestAgentClient, pid: number, between?: () => Promise<void>, quickRounds = 20): Promise<GuestExecStatus> {
  for (let round = 0; ; round++) {
    const status = await agent.request<GuestExecStatus>('guest-exec-status', { pid });
    await between?.();
    if (status.exited) return status;
    await sleep(round < quickRounds ? 15 : 100);
  }
}

/**
 * Runs a short driver command in the guest (identity, chmod, resize2fs …) and collects its
 * output, which the agent hands back only when the process has exited.
 */
export async function runInGuest(agent: GuestAgentClient, argv: string[], stdin?: Buffer, quickRounds?: number): Promise<GuestCommandResult> {
  const { pid } = await agent.request<{ pid: number }>('guest-exec', {
    path: argv[0],
    arg: argv.slice(1),
    env: GUEST_DEFAULT_ENV,
    'capture-output': true,
    ...(stdin ? { 'input-data': stdin.toString('base64') } : {}),
  });
  const status = await waitForGuestExit(agent, pid, undefined, quickRounds);
  return {
    exit_code: exitCodeOf(status),
    stdout: Buffer.from(status['out-data'] ?? '', 'base64'),
    stderr: Buffer.from(status['err-data'] ?? '', 'base64'),
  };
}

/** runInGuest that fails with the command's stderr unless it exits 0. */
export async function runInGuestOrFail(agent: GuestAgentClient, argv: string[], stdin?: Buffer, quickRounds?: number): Promise<Buffer> {
  const result = await runInGuest(agent, argv, stdin, quickRounds);
  if (result.exit_code !== 0) {
    throw new Error(`guest command ${argv.join(' ')} exited ${result.exit_code}: ${result.stderr.toString().trim()}`);
  }
  return result.stdout;
}
