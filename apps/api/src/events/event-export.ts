import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { EventStore } from '@arbor/event-store';
import { presentedEventJson } from '@arbor/application';
import type { EventFilter } from './event-filter';
import { type ExportRange, inTimeRange, pastRangeEnd } from './export-range';
import { PacedWriter } from './response-pacing';

/** Events read per page, as the log's subscriptions read them: the most an export holds at once. */
export const EXPORT_PAGE = 256;
/** Lines are gathered into writes of about this size (one write per line costs more than the JSON). */
const WRITE_BYTES = 64 * 1024;

/**
 * Streams a range of the log as NDJSON, one feed item a line, in log order: a page is read, its
 * lines written at the client's pace (see writePaced), then the next page, so an export of any
 * size holds one page. Ends at the end of the range; a failure half-way, or a shutdown, cuts the
 * response off (no final chunk), so a client never takes a partial export for a whole one.
 */
export async function exportEvents(store: EventStore, response: ServerResponse, range: ExportRange, filter: EventFilter, signal: AbortSignal): Promise<void> {
  response.statusCode = 200;
  response.setHeader('Content-Type', 'application/x-ndjson');
  response.setHeader('Cache-Control', 'no-store');
  // Where this export ended: pass it as `after` to export what came since.
  response.setHeader('Arbor-Export-Until', String(range.until));
  response.flushHeaders();
  const writer = new PacedWriter(response);
  const timed = range.since !== null || range.before !== null;
  const cutOff = () => response.destroy(); // also while waiting for a slow client to drain
  signal.addEventListener('abort', cutOff);
  if (signal.aborted) cutOff();
  try {
    let cursor = range.after;
    while (cursor < range.until && !response.destroyed) {
      const page = await store.readAllSerialized({ after_position: cursor, max_count: EXPORT_PAGE });
      let lines = '';
      for (const event of page) {
        const createdAt = timed ? Date.parse(event.created_at) : 0;
        if (event.position > range.until || (timed && pastRangeEnd(range, createdAt))) {
          cursor = range.until;
          break;
        }
        cursor = event.position;
        if ((timed && !inTimeRange(range, createdAt)) || !filter(event)) continue;
        lines += `${presentedEventJson(event)}\n`;
        if (lines.length >= WRITE_BYTES) {
          if (!(await writer.write(lines))) return;
          lines = '';
        }
      }
      if (lines && !(await writer.write(lines))) return;
      if (page.length < EXPORT_PAGE) break;
    }
    if ((await writer.drained()) && !response.destroyed) response.end();
  } catch (error) {
    new Logger('events').warn(`export cut off: ${error instanceof Error ? error.message : String(error)}`);
    response.destroy();
  } finally {
    signal.removeEventListener('abort', cutOff);
  }
}
