import { EventEmitter } from 'node:events';
import {
  ANY,
  AllStreamResolvedEvent,
  AllStreamSubscription,
  AppendExpectedRevision,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  JSONType,
  Position,
  ResolvedEvent,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  jsonEvent,
} from '@eventstore/db-client';
import {
  AllSubscription,
  AppendResult,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SerializedRecordedEvent,
  serializedEvent,
  SubscribeToAllOptions,
  WrongExpectedVersionError,
} from '../event-store.port';

/** Bounds of how many events one $all request asks for while paging past system events. */
const MIN_ALL_PAGE = 64;
const MAX_ALL_PAGE = 500;

/**
 * The event store port on EventStoreDB through `@eventstore/db-client`. Deliberately thin: it maps
 * names and numbers and hides system events, so moving to `@kurrent/kurrentdb-client` stays a
 * mechanical rename (`expectedRevision` → `streamState`).
 */
export class EventStoreDbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<EventStoreDbAllSubscription>();
  /** Emits 'stream' (its id) after each append through this object (onAppended). */
  private readonly appended = new EventEmitter().setMaxListeners(0);

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async append(stream_id: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`append to ${stream_id}: no events`);
    const data = events.map((event) =>
      jsonEvent({ id: event.id, type: event.type, data: event.data as JSONType, metadata: event.metadata as JSONType }),
    );
    try {
      const result = await this.client.appendToStream(stream_id, data, { expectedRevision: toEsdbRevision(expected) });
      const next_expected_revision = Number(result.nextExpectedRevision);
      // Servers before 21.x answer an idempotent retry without a position: look it up.
      const position = result.position ? Number(result.position.commit) : await this.positionOf(stream_id, next_expected_revision);
      this.appended.emit('stream', stream_id);
      return { next_expected_revision, position };
    } catch (error) {
      if (error instanceof EsdbWrongExpectedVersionError) {
        const actual = error.actualVersion === 'no_stream' ? 'no_stream' : Number(error.actualVersion);
        throw new WrongExpectedVersionError(stream_id, expected, actual);
      }
      throw error;
    }
  }

  async readStream(stream_id: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.max_count === 0) return [];
    const backwards = options.direction === 'backwards';
    const read = this.client.readStream(stream_id, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.from_revision === undefined ? (backwards ? END : START) : BigInt(options.from_revision),
      maxCount: options.max_count,
    });
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of read) events.push(toRecordedEvent(resolved));
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  /** Pages through $all until `max_count` non-system events are found or the log ends. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const limit = options.max_count ?? Infinity;
    // The port's bounds are exclusive; the server's forward reads include the event at the position.
    let cursor = backwards ? options.before_position : fromTheStartIfNegative(options.after_position);
    const beyondCursor = (position: number) =>
      cursor === undefined || (backwards ? position < cursor : position > cursor);
    const events: RecordedEvent[] = [];
    while (events.length < limit) {
      const pageSize = Math.min(MAX_ALL_PAGE, Math.max(MIN_ALL_PAGE, limit - events.length + 1));
      const page = await this.readAllPage(cursor, backwards, pageSize);
      for (const resolved of page) {
        const event = toRecordedEvent(resolved);
        if (!beyondCursor(event.position) || isSystemEvent(event)) continue;
        if (events.length < limit) events.push(event);
      }
      if (page.length < pageSize) break;
      cursor = Number(page[page.length - 1].event!.position!.commit);
    }
    return events;
  }

  async readAllSerialized(options: ReadAllOptions = {}): Promise<SerializedRecordedEvent[]> {
    return (await this.readAll(options)).map(serializedEvent);
  }

  async headPosition(): Promise<number> {
    const [last] = await this.readAll({ direction: 'backwards', max_count: 1 });
    return last ? last.position : -1;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    const after = fromTheStartIfNegative(options.after_position);
    const source = this.client.subscribeToAll({ fromPosition: after === undefined ? START : toEsdbPosition(after) });
    const subscription = new EventStoreDbAllSubscription(source, after, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: (stream_id: string) => void): () => void {
    this.appended.on('stream', listener);
    return () => this.appended.off('stream', listener);
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.unsubscribe()));
    await this.client.dispose();
  }

  private async readAllPage(cursor: number | undefined, backwards: boolean, maxCount: number) {
    const read = this.client.readAll({
      direction: backwards ? BACKWARDS : FORWARDS,
      fromPosition: cursor === undefined ? (backwards ? END : START) : toEsdbPosition(cursor),
      maxCount,
    });
    const page: AllStreamResolvedEvent[] = [];
    for await (const resolved of read) page.push(resolved);
    return page;
  }

  private async positionOf(stream_id: string, revision: number): Promise<number> {
    const [event] = await this.readStream(stream_id, { from_revision: revision, max_count: 1 });
    return event.position;
  }
}

/** The client's subscription never ends on its own after unsubscribe; this one does. */
class EventStoreDbAllSubscription implements AllSubscription {
  private stopped = false;
  private signalStop!: (result: IteratorReturnResult<undefined>) => void;
  private readonly stop = new Promise<IteratorReturnResult<undefined>>((resolve) => (this.signalStop = resolve));

  constructor(
    private readonly source: AllStreamSubscription,
    private readonly after: number | undefined,
    private readonly onStopped: () => void,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    const resolvedEvents = this.source[Symbol.asyncIterator]();
    try {
      while (!this.stopped) {
        const next = await Promise.race([resolvedEvents.next(), this.stop]);
        if (next.done) return;
        const event = toRecordedEvent(next.value);
        // Skip what the subscription may repeat at its start position, and the server's own events.
        if ((this.after !== undefined && event.position <= this.after) || isSystemEvent(event)) continue;
        yield event;
      }
    } finally {
      await this.unsubscribe();
    }
  }

  async unsubscribe(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.signalStop({ done: true, value: undefined });
    this.onStopped();
    await this.source.unsubscribe();
    this.source.destroy();
  }
}

function toEsdbRevision(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return BigInt(expected);
}

/**
 * The port's "after -1" (the head of an empty log) means the beginning; the server has no negative
 * positions (the client cannot even encode one), so it becomes START.
 */
function fromTheStartIfNegative(after: number | undefined): number | undefined {
  return after !== undefined && after < 0 ? undefined : after;
}

function toEsdbPosition(position: number): Position {
  return { commit: BigInt(position), prepare: BigInt(position) };
}

function toRecordedEvent(resolved: ResolvedEvent): RecordedEvent {
  const event = resolved.event!;
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata as EventMetadata,
    stream_id: event.streamId,
    revision: Number(event.revision),
    position: Number(event.position!.commit),
    created_at: event.created.toISOString(),
  };
}

/** EventStoreDB's own events ($stats, $users, $settings …) are not Arbor's log. */
function isSystemEvent(event: RecordedEvent): boolean {
  return event.type.startsWith('$') || event.stream_id.startsWith('$');
}
