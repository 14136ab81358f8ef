import type { DomainCommand } from '../shared/decider';
import type { ExecOutputStream } from './exec.events';

/** From the API: run a command in a VM. */
export type RequestExec = DomainCommand<
  'RequestExec',
  {
    exec_id: string;
    vm_id: string;
    org_id: string;
    command: string[];
    env: Record<string, string> | null;
    working_dir: string | null;
    stdin: string | null;
    timeout_secs: number;
    now: string;
  }
>;

/** From the vm-worker: what happened to the command. */
export type RecordExecStarted = DomainCommand<'RecordExecStarted', { now: string }>;
export type RecordExecOutput = DomainCommand<'RecordExecOutput', { chunks: { stream: ExecOutputStream; data: Buffer }[]; now: string }>;
export type RecordExecExited = DomainCommand<'RecordExecExited', { exit_code: number; now: string }>;
export type RecordExecFailed = DomainCommand<'RecordExecFailed', { reason: string; now: string }>;

export type ExecCommand = RequestExec | RecordExecStarted | RecordExecOutput | RecordExecExited | RecordExecFailed;
