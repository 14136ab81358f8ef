import { EventEmitter } from 'node:events';
import {
  type AllSubscription,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  serializedEvent,
  type SerializedRecordedEvent,
  WrongExpectedVersionError,
} from '../event-store.port';
import { actualOf, classifyRetry, retryStart, satisfies } from '../expected-revision';

/**
 * The event store port in memory, for unit tests: same rules as the durable adapters (expected
 * revisions, EventStoreDB-style idempotent retries), nothing kept. Positions start at 0.
 */
export class InMemoryEventStore implements EventStore {
  private readonly log: RecordedEvent[] = [];
  private readonly streams = new Map<string, RecordedEvent[]>();
  /** Emits 'appended' (and 'closed') so live subscriptions wake without polling, and 'stream' (its id) for onAppended. */
  private readonly signals = new EventEmitter().setMaxListeners(0);
  private closed = false;

  async append(stream_id: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`append to ${stream_id}: no events`);
    const stream = this.streams.get(stream_id) ?? [];
    const current = stream.length - 1;
    const replay = this.idempotentReplay(stream, events, expected);
    if (replay === 'conflict') throw new WrongExpectedVersionError(stream_id, expected, actualOf(current));
    if (replay) {
      this.signals.emit('stream', stream_id);
      return { next_expected_revision: replay.revision, position: replay.position };
    }
    if (!satisfies(expected, current)) throw new WrongExpectedVersionError(stream_id, expected, actualOf(current));

    const created_at = new Date().toISOString();
    const recorded = events.map(
      (event, index): RecordedEvent => ({
        // Copies, so that callers mutating their objects cannot rewrite history.
        ...structuredClone(event),
        stream_id,
        revision: current + 1 + index,
        position: this.log.length + index,
        created_at,
      }),
    );
    this.streams.set(stream_id, [...stream, ...recorded]);
    this.log.push(...recorded);
    this.signals.emit('appended');
    this.signals.emit('stream', stream_id);
    const last = recorded[recorded.length - 1];
    return { next_expected_revision: last.revision, position: last.position };
  }

  async readStream(stream_id: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const stream = this.streams.get(stream_id) ?? [];
    const limit = options.max_count ?? Infinity;
    const from = options.from_revision;
    const selected =
      options.direction === 'backwards'
        ? stream.filter((event) => from === undefined || event.revision <= from).reverse()
        : stream.filter((event) => from === undefined || event.revision >= from);
    return structuredClone(selected.slice(0, limit));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.max_count ?? Infinity;
    const selected =
      options.direction === 'backwards'
        ? this.log.filter((event) => options.before_position === undefined || event.position < options.before_position).reverse()
        : this.log.filter((event) => options.after_position === undefined || event.position > options.after_position);
    return structuredClone(selected.slice(0, limit));
  }

  async readAllSerialized(options: ReadAllOptions = {}): Promise<SerializedRecordedEvent[]> {
    return (await this.readAll(options)).map(serializedEvent);
  }

  async headPosition(): Promise<number> {
    return this.log.length - 1;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    return new InMemoryAllSubscription(this.log, this.signals, options.after_position ?? -1, () => this.closed);
  }

  onAppended(listener: (stream_id: string) => void): () => void {
    this.signals.on('stream', listener);
    return () => this.signals.off('stream', listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.signals.emit('closed');
  }

  /**
   * EventStoreDB's rule: a batch whose ids are already in the stream where `expected` puts them is
   * a retry and returns the first result; a batch that only partly matches is a conflict.
   */
  private idempotentReplay(stream: RecordedEvent[], events: NewEvent[], expected: ExpectedRevision): RecordedEvent | 'conflict' | undefined {
    const start = retryStart(expected, () => {
      const index = stream.findIndex((event) => event.id === events[0].id);
      return index < 0 ? null : index;
    });
    if (start === null) return undefined;
    const verdict = classifyRetry(stream.slice(start, start + events.length).map((event) => event.id), events);
    if (verdict === 'new') return undefined;
    return verdict === 'retry' ? stream[start + events.length - 1] : 'conflict';
  }
}

class InMemoryAllSubscription implements AllSubscription {
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly log: readonly RecordedEvent[],
    private readonly signals: EventEmitter,
    private readonly afterPosition: number,
    private readonly storeClosed: () => boolean,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    // Positions are array indexes here, so the next event to deliver is log[next].
    let next = this.afterPosition + 1;
    try {
      while (!this.stopped && !this.storeClosed()) {
        if (next < this.log.length) yield structuredClone(this.log[next++]);
        else await this.nextSignal();
      }
    } finally {
      await this.unsubscribe();
    }
  }

  async unsubscribe(): Promise<void> {
    this.stopped = true;
    this.wake?.();
  }

  /** Resolves on the next append, on close, or on unsubscribe. */
  private nextSignal(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.signals.off('appended', wake).off('closed', wake);
        this.wake = undefined;
        resolve();
      };
      this.signals.on('appended', wake).on('closed', wake);
      this.wake = wake;
    });
  }
}
