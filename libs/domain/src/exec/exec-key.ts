/**
 * The key of an exec's stream (`exec-<key>`): the org and the exec id. Clients choose exec ids, so
 * they are scoped by org: another org's exec of the same id is another stream, never met, never
 * in the way. Logs from before the scoping keyed streams by the exec id alone (`legacyExecKey`).
 */
export const execKey = (org_id: string, exec_id: string): string => `${org_id}-${exec_id}`;
export const legacyExecKey = (exec_id: string): string => exec_id;

/** One output event holds at most this much (64 KiB; base64 makes it about 87 KiB in the log). */
export const EXEC_OUTPUT_CHUNK_MAX_BYTES = 64 * 1024;

/** The exit code of a command stopped at the output limit: killed (128 + SIGKILL). */
export const EXEC_OUTPUT_LIMIT_EXIT_CODE = 137;

/** The line that ends the recorded output of an exec stopped at the limit (on stderr). */
export function execOutputLimitNote(limit_bytes: number): string {
  return `\narbor: output limit of ${limit_bytes} bytes reached; the rest was dropped and the command was stopped (exit code ${EXEC_OUTPUT_LIMIT_EXIT_CODE})\n`;
}

/** The exit code a sync exec answers for an exec lost with its worker: no process exits with it. */
export const EXEC_LOST_EXIT_CODE = -1;
