import type { ServerResponse } from 'node:http';
import type { ExecStreamItem } from './exec-lines';

/**
 * Sends exec lines as NDJSON (`application/x-ndjson`, chunked), each line written as soon as it
 * is produced. The response starts when the follower says the exec is open, so a command that
 * could not run is still answered with a JSON error; the body ends after the last line.
 */
export async function sendNdjson(response: ServerResponse, items: AsyncIterable<ExecStreamItem>): Promise<void> {
  const start = () => {
    if (response.headersSent) return;
    response.statusCode = 200;
    response.setHeader('Content-Type', 'application/x-ndjson');
    response.setHeader('Cache-Control', 'no-store');
    response.flushHeaders();
  };
  for await (const item of items) {
    if (response.destroyed) break;
    start();
    if (item.kind === 'open') continue;
    await writeOrWait(response, `${JSON.stringify(item.line)}\n`);
  }
  start();
  response.end();
}

/** An AbortSignal that fires when the client goes away before the response has ended. */
export function clientGone(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => controller.abort());
  return controller.signal;
}

/**
 * Writes `text` and, when the socket's buffer is full, waits until it drains (or the client goes
 * away): a slow client slows the reading of the log instead of filling the api's memory.
 */
export async function writeOrWait(response: ServerResponse, text: string): Promise<void> {
  if (response.write(text) || response.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
