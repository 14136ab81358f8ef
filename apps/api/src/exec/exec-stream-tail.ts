import { WakeOnChange } from '@arbor/application';
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
 * so however much the exec printed the reader holds one page. New events are seen at once when
 * they are appended through this process (the embedded worker's appends wake the tail), and
 * otherwise by polling, with a short interval while output flows, so it works the same when the
 * worker runs in another process. Stops (without error) when `signal` aborts, e.g. the client
 * went away.
 */
export async function* tailExecStream(store: EventStore, key: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<RecordedEvent> {
  const stream = Exec.stream(key);
  const changes = new WakeOnChange((listener) => store.onAppended((appended) => appended === stream && listener()));
  try {
    let from = fromRevision;
    let pollMs = MIN_POLL_MS;
    while (!signal.aborted) {
      changes.mark();
      const events = await store.readStream(stream, { from_revision: from, max_count: PAGE });
      for (const event of events) {
        yield event;
        if (TERMINAL.has(event.type)) return;
      }
      if (events.length) {
        from = events[events.length - 1].revision + 1;
        pollMs = MIN_POLL_MS;
        continue;
      }
      await changes.sleep(pollMs, signal);
      pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
    }
  } finally {
    changes.close();
  }
}
