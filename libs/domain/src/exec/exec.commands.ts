import type { DomainCommand } from '../shared/decider';
import type { ExecOutputStream, ExecRequested } from './exec.events';

/** From the API: run a command in a VM. */
export type RequestExec = DomainCommand<'RequestExec', Omit<ExecRequested['data'], 'requested_at'> & { now: string }>;

/** From the vm-worker: what happened to the command. */
export type RecordExecStarted = DomainCommand<'RecordExecStarted', { now: string }>;
/** `limit_bytes`: the most output an exec records (the worker's ARBOR_EXEC_OUTPUT_MAX_BYTES). */
/** `limit_bytes`: the most output one exec records (the worker's ARBOR_EXEC_OUTPUT_MAX_BYTES). */
export type RecordExecOutput = DomainCommand<'RecordExecOutput', { chunks: { stream: ExecOutputStream; data: Buffer }[]; limit_bytes: number; now: string }>;
export type RecordExecExited = DomainCommand<'RecordExecExited', { exit_code: number; now: string }>;
export type RecordExecFailed = DomainCommand<'RecordExecFailed', { reason: string; now: string }>;
/** A worker found the exec started but not running here: it restarted while the command ran. */
export type RecordExecLost = DomainCommand<'RecordExecLost', { reason: string; now: string }>;

export type ExecCommand = RequestExec | RecordExecStarted | RecordExecOutput | RecordExecExited | RecordExecFailed | RecordExecLost;
