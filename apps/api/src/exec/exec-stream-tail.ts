import { Exec } from '@arbor/domain';
import type { EventStore, RecordedEvent } from '@arbor/event-store';

const TERMINAL = new Set(['ExecExited', 'ExecFailed', 'ExecLost']);
const MIN_POLL_MS = 2;
const MAX_POLL_MS = 10;
/** Events read at once: output events are at most ~87 KiB each, so a page is a few MiB at most. */
const PAGE = 32;

/**
 * The events of an exec stream (`exec-<key>`) from `fromRevision` on: the backlog first, then
 * each new event as it is appended, ending after the exit (or failure). It reads a page at a time,
 * so however much the exec printed the reader holds one page, and polls the store, with a short
 * interval while output flows, so it works the same when the worker runs in another process.
 * Stops (without error) when `signal` aborts, e.g. the client went away.
 */
export async function* tailExecStream(store: EventStore, key: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<RecordedEvent> {
  let from = fromRevision;
  let pollMs = MIN_POLL_MS;
  while (!signal.aborted) {
    const events = await store.readStream(Exec.stream(key), { from_revision: from, max_count: PAGE });
    for (const event of events) {
      yield event;
      if (TERMINAL.has(event.type)) return;
    }
    if (events.length) {
      from = events[events.length - 1].revision + 1;
      pollMs = MIN_POLL_MS;
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
  }
}
