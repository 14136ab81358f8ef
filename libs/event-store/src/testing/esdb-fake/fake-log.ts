/**
 * The in-memory log behind the EventStoreDB fake: streams with revisions, one $all order, positions.
 *
 * Positions are byte-offset-like (they grow by the event's size, not by 1) so that callers cannot
 * get away with assuming dense positions. Commit and prepare positions are equal for every event,
 * as for the implicit transactions a real server writes for each append.
 */

export interface FakeEvent {
  streamName: string;
  revision: number;
  position: number;
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
  /** .NET ticks (100 ns) since the Unix epoch, as the server sends in the `created` metadata. */
  createdTicks: bigint;
}

export type ProposedEvent = Pick<FakeEvent, 'id' | 'type' | 'contentType' | 'data' | 'customMetadata'>;

export type FakeExpectation = { kind: 'any' } | { kind: 'no_stream' } | { kind: 'stream_exists' } | { kind: 'revision'; revision: number };

export type FakeAppendOutcome =
  | { ok: true; lastRevision: number; lastPosition: number }
  | { ok: false; currentRevision: number | null };

const TICKS_PER_MS = 10_000n;
const RECORD_OVERHEAD = 64;

export class FakeLog {
  private readonly all: FakeEvent[] = [];
  private readonly streams = new Map<string, FakeEvent[]>();
  private readonly listeners = new Set<(event: FakeEvent) => void>();
  private nextPosition = 0;

  stream(streamName: string): FakeEvent[] | undefined {
    return this.streams.get(streamName);
  }

  events(): readonly FakeEvent[] {
    return this.all;
  }

  /** Appends atomically, with the expected-revision and idempotency rules of a real server. */
  append(streamName: string, expected: FakeExpectation, proposed: ProposedEvent[]): FakeAppendOutcome {
    const existing = this.streams.get(streamName) ?? [];
    const current = existing.length - 1;
    const replay = this.idempotentReplay(existing, expected, proposed);
    if (replay === 'corrupt') return { ok: false, currentRevision: existing.length ? current : null };
    if (replay) return { ok: true, lastRevision: replay.revision, lastPosition: replay.position };
    if (!this.satisfies(existing, expected)) return { ok: false, currentRevision: existing.length ? current : null };

    const createdTicks = BigInt(Date.now()) * TICKS_PER_MS;
    const written = proposed.map((event, index): FakeEvent => {
      const position = this.nextPosition;
      this.nextPosition += RECORD_OVERHEAD + event.data.length + event.customMetadata.length;
      return { ...event, streamName, revision: current + 1 + index, position, createdTicks };
    });
    this.streams.set(streamName, [...existing, ...written]);
    this.all.push(...written);
    for (const event of written) for (const listener of this.listeners) listener(event);
    const last = written[written.length - 1];
    return { ok: true, lastRevision: last?.revision ?? current, lastPosition: last?.position ?? -1 };
  }

  /** Calls `listener` for every event appended from now on; returns the way to stop. */
  onAppended(listener: (event: FakeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private satisfies(existing: FakeEvent[], expected: FakeExpectation): boolean {
    switch (expected.kind) {
      case 'any':
        return true;
      case 'no_stream':
        return existing.length === 0;
      case 'stream_exists':
        return existing.length > 0;
      case 'revision':
        return existing.length - 1 === expected.revision;
    }
  }

  /**
   * A retry of an append that already happened (same event ids at the place the append expected)
   * returns the first result instead of writing again; a partial match is a conflict.
   */
  private idempotentReplay(
    existing: FakeEvent[],
    expected: FakeExpectation,
    proposed: ProposedEvent[],
  ): FakeEvent | 'corrupt' | undefined {
    if (proposed.length === 0) return undefined;
    let start: number;
    if (expected.kind === 'revision') start = expected.revision + 1;
    else if (expected.kind === 'no_stream') start = 0;
    else start = existing.findIndex((event) => event.id === proposed[0].id);
    if (start < 0 || start >= existing.length || existing[start].id !== proposed[0].id) return undefined;
    const matching = proposed.every((event, index) => existing[start + index]?.id === event.id);
    return matching ? existing[start + proposed.length - 1] : 'corrupt';
  }
}
