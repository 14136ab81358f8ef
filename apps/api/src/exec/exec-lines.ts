import type { ExecExited, ExecFailed, ExecLost, ExecOutput } from '@arbor/domain';

/** NDJSON lines of /exec/stream and /exec/stream/attach (docs/api-behaviour.md#streaming-exec), in their exact shapes. */
export type ExecChunkLine = { type: 'chunk'; exec_id: string | null; cursor: number; stream: 'stdout' | 'stderr'; data_b64: string };
export type ExecExitLine = { type: 'exit'; exec_id: string | null; cursor: number; exit_code: number };
/**
 * The CLI understands this line as a failure; sent when the command could not finish:
 * `exec_failed` (it failed after it started) or `exec_lost` (the worker restarted while it ran: it
 * was not run again and its exit is unknown).
 */
export type ExecErrorLine = { type: 'error'; code: 'exec_failed' | 'exec_lost'; message: string; exec_id: string | null; cursor: number };
export type ExecLine = ExecChunkLine | ExecExitLine | ExecErrorLine;

/** What a follower yields: `open` once the worker has the command (the response may start), then lines. */
export type ExecStreamItem = { kind: 'open' } | { kind: 'line'; line: ExecLine };

export const chunkLine = (exec_id: string | null, d: ExecOutput['data']): ExecChunkLine => ({
  type: 'chunk',
  exec_id,
  cursor: d.cursor,
  stream: d.stream,
  data_b64: d.data_b64,
});

export const exitLine = (exec_id: string | null, d: ExecExited['data']): ExecExitLine => ({ type: 'exit', exec_id, cursor: d.cursor, exit_code: d.exit_code });

export const errorLine = (exec_id: string | null, d: ExecFailed['data'] | ExecLost['data'], code: ExecErrorLine['code']): ExecErrorLine => ({
  type: 'error',
  code,
  message: d.reason,
  exec_id,
  cursor: d.cursor,
});
