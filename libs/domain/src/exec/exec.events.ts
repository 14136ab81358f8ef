import { eventTypes, type DomainEvent } from '../shared/decider';

export type ExecOutputStream = 'stdout' | 'stderr';

/**
 * Events of the `exec-<id>` stream: one command run in a VM. ExecRequested is the intent the
 * vm-worker acts on; the rest are its outcomes. Output is kept as events so attaching with a cursor
 * is a catch-up read of the stream and logs are a projection of it.
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
/** The command could not run (the VM is dead or deleted), or its outcome is unknown (the worker restarted while it ran). */
export type ExecFailed = DomainEvent<'ExecFailed', { exec_id: string; vm_id: string; cursor: number; reason: string; at: string }>;

export type ExecEvent = ExecRequested | ExecStarted | ExecOutput | ExecExited | ExecFailed;
export const EXEC_EVENT_TYPES = eventTypes<ExecEvent>()('ExecRequested', 'ExecStarted', 'ExecOutput', 'ExecExited', 'ExecFailed');
