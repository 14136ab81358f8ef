import { eventTypes, type DomainEvent } from '../shared/decider';

export type ExecOutputStream = 'stdout' | 'stderr';

/**
 * Events of the `exec-<org id>-<exec id>` stream (`exec-<exec id>` in logs from before exec ids
 * were scoped by org): one command run in a VM. ExecRequested is the intent the vm-worker acts
 * on; the rest are its outcomes. Output is kept as events so attaching with a cursor is a
 * catch-up read of the stream and logs are a projection of it.
 */
export type ExecRequested = DomainEvent<
  'ExecRequested',
  {
    exec_id: string;
    vm_id: string;
    org_id: string;
    /** argv, run without a shell. */
    command: string[];
    /**
     * Extra environment variables. Each value is sealed in the log with the org's key (the names
     * stay readable); the feed shows them as [redacted].
     * @sealed "values"
     */
    env: Record<string, string> | null;
    working_dir: string | null;
    /**
     * UTF-8 text fed to the command's stdin. Sealed in the log with the org's key.
     * @sealed "text"
     */
    stdin: string | null;
    /** 0: no timeout. */
    timeout_secs: number;
    requested_at: string;
  }
>;
/**
 * The worker handed the command to the machine. Recorded before the driver call, so a worker that
 * restarts can tell "never ran" (safe to run) from "ran, outcome unknown" (must not run twice).
 */
export type ExecStarted = DomainEvent<'ExecStarted', { exec_id: string; vm_id: string; started_at: string }>;
/** One batch of output bytes of one stream. Cursors increase strictly from 1 within an exec. */
export type ExecOutput = DomainEvent<
  'ExecOutput',
  { exec_id: string; vm_id: string; cursor: number; stream: ExecOutputStream; data_b64: string; at: string }
>;
export type ExecExited = DomainEvent<'ExecExited', { exec_id: string; vm_id: string; cursor: number; exit_code: number; at: string }>;
/** The command could not run (the VM is dead or deleted), or it failed after it started. */
export type ExecFailed = DomainEvent<'ExecFailed', { exec_id: string; vm_id: string; cursor: number; reason: string; at: string }>;
/**
 * The command's output passed the limit (ARBOR_EXEC_OUTPUT_MAX_BYTES): what came before it is
 * recorded, the rest is dropped, and the command is stopped. Appended with the output up to the
 * limit and a note on stderr saying so; the exit that follows has exit code 137 (killed).
 */
export type ExecOutputLimitReached = DomainEvent<'ExecOutputLimitReached', { exec_id: string; vm_id: string; limit_bytes: number; at: string }>;
/**
 * The worker restarted while the command ran: it is not run again (it may have had effects), its
 * output up to then is recorded, its exit is unknown. (Logs from before this event existed say
 * so with an ExecFailed.)
 */
export type ExecLost = DomainEvent<'ExecLost', { exec_id: string; vm_id: string; cursor: number; reason: string; at: string }>;

export type ExecEvent = ExecRequested | ExecStarted | ExecOutput | ExecExited | ExecFailed | ExecOutputLimitReached | ExecLost;
export const EXEC_EVENT_TYPES = eventTypes<ExecEvent>()('ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited', 'ExecFailed', 'ExecOutputLimitReached', 'ExecLost');
