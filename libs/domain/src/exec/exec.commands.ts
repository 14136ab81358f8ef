import type { ExecOutputStream } from './exec.events';

/** From the API: run a command in a VM. */
export type RequestExec = {
  type: 'RequestExec';
  exec_id: string;
  vm_id: string;
  org_id: string;
  command: string[];
  env: Record<string, string> | null;
  working_dir: string | null;
  stdin: string | null;
  timeout_secs: number;
  now: string;
};

/** From the vm-worker: what happened to the command. */
export type RecordExecStarted = { type: 'RecordExecStarted'; now: string };
export type RecordExecOutput = { type: 'RecordExecOutput'; chunks: { stream: ExecOutputStream; data: Buffer }[]; now: string };
export type RecordExecExited = { type: 'RecordExecExited'; exit_code: number; now: string };
export type RecordExecFailed = { type: 'RecordExecFailed'; reason: string; now: string };

export type ExecCommand = RequestExec | RecordExecStarted | RecordExecOutput | RecordExecExited | RecordExecFailed;
