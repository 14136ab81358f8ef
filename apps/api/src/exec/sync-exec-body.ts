import type { ServerResponse } from 'node:http';
import type { ExecOutput, ExecOutputStream } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';
import { tailExecStream } from './exec-stream-tail';
import { writeOrWait } from './ndjson-response';

/** How a finished exec answers POST /vm/{id}/exec; its output is read from the log as the body is written. */
export interface SyncExecAnswer {
  /** The exec's stream key. */
  key: string;
  exit_code: number;
  /** In the body when the client named the exec, or when the answer needs it (lost). */
  exec_id: string | null;
  /** Said at the end of stderr (the exec was lost with its worker). */
  stderrNote: string | null;
}

/** An answer up to this long is sent in one piece, with its length; a longer one is streamed. */
const ONE_PIECE_CHARS = 64 * 1024;

/**
 * Writes the contract's sync exec answer, `{exit_code, stdout, stderr, exec_id?}`, without holding
 * the output: stdout is read from the exec's stream and written a page at a time, then stderr the
 * same way (a second read of the log), each decoded as UTF-8 across chunk boundaries (lossily,
 * as the contract says) and escaped as a JSON string. The api holds one page of the log and one
 * socket buffer whatever the command printed; an answer of at most 64 KiB (most of them) is
 * gathered and sent in one write with its Content-Length rather than as chunks. A read that
 * fails half-way ends the response without its last chunk, so the client sees it cut off rather
 * than a short answer.
 */
export async function writeSyncExecBody(response: ServerResponse, store: EventStore, answer: SyncExecAnswer, signal: AbortSignal): Promise<void> {
  let gathered: string | null = '';
  const write = (text: string) => {
    if (gathered === null) return writeOrWait(response, text);
    gathered += text;
    if (gathered.length <= ONE_PIECE_CHARS) return Promise.resolve();
    const start = gathered;
    gathered = null;
    return writeOrWait(response, start);
  };
  response.statusCode = 200;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Cache-Control', 'no-store');
  try {
    await write(`{"exit_code":${answer.exit_code},"stdout":"`);
    await writeOutput(store, answer.key, 'stdout', write, signal);
    await write('","stderr":"');
    await writeOutput(store, answer.key, 'stderr', write, signal);
    if (answer.stderrNote) await write(jsonEscaped(answer.stderrNote));
    await write(answer.exec_id ? `","exec_id":${JSON.stringify(answer.exec_id)}}` : '"}');
  } catch (error) {
    response.destroy(error as Error);
    return;
  }
  if (gathered === null) return void response.end();
  response.setHeader('Content-Length', Buffer.byteLength(gathered));
  response.end(gathered);
}

async function writeOutput(store: EventStore, key: string, stream: ExecOutputStream, write: (text: string) => Promise<void>, signal: AbortSignal): Promise<void> {
  const decoder = new TextDecoder('utf-8');
  for await (const event of tailExecStream(store, key, 0, signal)) {
    if (event.type !== 'ExecOutput') continue;
    const data = event.data as ExecOutput['data'];
    if (data.stream !== stream) continue;
    const text = decoder.decode(Buffer.from(data.data_b64, 'base64'), { stream: true });
    if (text) await write(jsonEscaped(text));
  }
  if (signal.aborted) throw new Error('the client went away');
  const rest = decoder.decode();
  if (rest) await write(jsonEscaped(rest));
}

/** `text` as the inside of a JSON string. */
const jsonEscaped = (text: string) => JSON.stringify(text).slice(1, -1);
