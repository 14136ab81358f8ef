import type { RecordedEvent } from '@arbor/event-store';

/** One stream as a process last read it: its events (upcast) and their fold. */
export interface FoldedStream<S> {
  recorded: RecordedEvent[];
  state: S;
  revision: number;
}

/**
 * The streams a process read last, folded, so that reading one again costs only the events
 * appended since (a stream is append-only: what was read stays true). What makes it worth it is
 * a long, hot stream such as an org's usage (`usage-<org>`), which every VM creation and deletion
 * of the org decides on: read and folded whole, each command would cost the org's whole history.
 * Least recently used streams go first once more than `maxEvents` events are kept.
 *
 * Only for aggregates with no sealed fields: a folded state holds what it was folded from, and
 * sealed values are opened afresh on every read (a shredded key must stop them at once).
 */
export class FoldedStreams {
  private readonly streams = new Map<string, FoldedStream<unknown>>();
  private events = 0;

  constructor(private readonly maxEvents = 200_000) {}

  get<S>(stream: string): FoldedStream<S> | undefined {
    const folded = this.streams.get(stream) as FoldedStream<S> | undefined;
    if (folded) {
      // Most recently used last: a Map iterates in insertion order.
      this.streams.delete(stream);
      this.streams.set(stream, folded);
    }
    return folded;
  }

  set<S>(stream: string, folded: FoldedStream<S>): void {
    const previous = this.streams.get(stream);
    if (previous && previous.revision >= folded.revision) return; // a concurrent reader got further
    if (previous) this.events -= previous.recorded.length;
    this.streams.delete(stream);
    this.streams.set(stream, folded);
    this.events += folded.recorded.length;
    for (const [oldest, entry] of this.streams) {
      if (this.events <= this.maxEvents || oldest === stream) break;
      this.streams.delete(oldest);
      this.events -= entry.recorded.length;
    }
  }
}
