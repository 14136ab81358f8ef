import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { EventStore, RecordedEvent } from '@arbor/event-store';
import { presentEvent } from './event-presenter';
import type { EventFilter } from './event-filter';
import { writePaced } from './response-pacing';

export interface EventStreamOptions {
  /** Send events after this log position (exclusive); -1: from the beginning. */
  after: number;
  filter: EventFilter;
  heartbeatMs: number;
  /** Fires when the client goes away or the api shuts down. */
  signal: AbortSignal;
  /** How long a client that reads nothing keeps its stream (see writePaced). */
  stallMs?: number;
}

/**
 * Follows the log as Server-Sent Events: each event the filter lets through is one message,
 * `id:` its log position, `event:` its type, `data:` the feed's JSON for it, written (and so
 * flushed) on its own. The log is read through a subscription, pulled one event at a time and
 * only once the previous message has gone into the socket, so a slow client holds back its own
 * reading and nothing piles up in the api.
 *
 * A quiet stream sends a heartbeat comment every `heartbeatMs`; when events were passed over by
 * the filter since the last message, the heartbeat also carries `id:` with the last position
 * read. An `id:` without data dispatches nothing but moves the client's Last-Event-ID, so a
 * client that reconnects does not read those events again.
 *
 * Ends when the client goes away or the api shuts down (the client reconnects with
 * Last-Event-ID: no gap, no repeat); a failing store cuts the response off, which the client
 * sees as an error and reconnects the same way.
 */
export async function streamEvents(store: EventStore, response: ServerResponse, options: EventStreamOptions): Promise<void> {
  const { after, filter, heartbeatMs, signal, stallMs } = options;
  response.statusCode = 200;
  response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  response.setHeader('Cache-Control', 'no-store');
  response.setHeader('X-Accel-Buffering', 'no'); // proxies (nginx) must not hold messages back
  response.flushHeaders();

  const subscription = store.subscribeToAll({ after_position: after });
  const stop = () => {
    void subscription.unsubscribe();
    if (response.writableNeedDrain) response.destroy(); // a client that is not reading is not waited for
  };
  signal.addEventListener('abort', stop);
  if (signal.aborted) stop();
  /** The last position the client was told of (a message or a heartbeat's id), and the last one read. */
  let told = after;
  let read = after;
  let wroteSinceBeat = true;
  const heartbeat = setInterval(() => {
    if (wroteSinceBeat || response.writableNeedDrain) {
      wroteSinceBeat = false;
      return;
    }
    response.write(read > told ? `: heartbeat\nid: ${read}\n\n` : ': heartbeat\n\n');
    told = read;
  }, heartbeatMs);
  try {
    if (!(await writePaced(response, `: following the log after position ${after}\n\n`, stallMs))) return;
    for await (const event of subscription) {
      read = event.position;
      if (!filter(event)) continue;
      told = event.position;
      wroteSinceBeat = true;
      if (!(await writePaced(response, message(event), stallMs))) return;
    }
  } catch (error) {
    new Logger('events').warn(`event stream cut off: ${error instanceof Error ? error.message : String(error)}`);
    response.destroy();
  } finally {
    clearInterval(heartbeat);
    signal.removeEventListener('abort', stop);
    await subscription.unsubscribe();
    if (!response.destroyed) response.end();
  }
}

/** One SSE message: JSON has no raw line breaks, so `data:` is one line. */
function message(event: RecordedEvent): string {
  return `id: ${event.position}\nevent: ${event.type}\ndata: ${JSON.stringify(presentEvent(event))}\n\n`;
}
