/**
 * The event store port, in the shape of EventStoreDB: streams with revisions, one global log
 * ($all) with a stable position, optimistic concurrency on every append.
 *
 * Revisions and positions are plain numbers (safe to 2^53): a stream's first event has revision 0;
 * global positions grow strictly with append order and are never reused.
 */

/** What an append expects the stream to be at. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

/** Metadata every Arbor event carries (see docs/design.md#the-log). */
export interface EventMetadata {
  /** Version of the event's data schema; upcasters bring old versions up on read. */
  schema_version: number;
  /** Ties every event caused by one API request (or one operator action) together. */
  correlation_id: string;
  /** Id of the command or event that directly caused this one. */
  causation_id: string;
  /** The API key that acted (null for system actions: bootstrap, the worker's own findings). */
  actor_key_id: string | null;
  /** The org the event belongs to (null only for system-wide events). */
  org_id: string | null;
  [extra: string]: unknown;
}

/** An event to append. `id` is a UUID derived from the command id, so retries append nothing new. */
export interface NewEvent<TData = unknown> {
  id: string;
  type: string;
  data: TData;
  metadata: EventMetadata;
}

/** An event as stored. */
export interface RecordedEvent<TData = unknown> extends NewEvent<TData> {
  stream_id: string;
  /** 0-based index within its stream. */
  revision: number;
  /** Position in the global log ($all); strictly increasing in append order. */
  position: number;
  /** ISO-8601 time the store recorded the event. */
  created_at: string;
}

/**
 * An event with its data as the JSON text the store holds, unparsed: for copying the log out
 * (the export) without parsing and serializing every event's data again.
 */
export interface SerializedRecordedEvent extends Omit<RecordedEvent, 'data'> {
  data_json: string;
}

/** `event` as a SerializedRecordedEvent, for stores that hold events parsed. */
export function serializedEvent({ data, ...envelope }: RecordedEvent): SerializedRecordedEvent {
  return { ...envelope, data_json: JSON.stringify(data ?? null) };
}

export interface AppendResult {
  /** Revision of the last event now in the stream (what to pass as expected revision next). */
  next_expected_revision: number;
  /** Global position of the last appended event. */
  position: number;
}

export type Direction = 'forwards' | 'backwards';

export interface ReadStreamOptions {
  direction?: Direction;
  /** Inclusive revision to start at; default: start (forwards) or end (backwards). */
  from_revision?: number;
  max_count?: number;
}

export interface ReadAllOptions {
  direction?: Direction;
  /**
   * Exclusive position: forwards reads return events with position > after_position (default:
   * from the beginning); backwards reads return events with position < before_position.
   * A negative after_position (-1, the headPosition of an empty log) also means the beginning.
   */
  after_position?: number;
  before_position?: number;
  max_count?: number;
}

export interface SubscribeToAllOptions {
  /** Deliver events with position > after_position; omit it, or pass a negative one (-1), to start at the beginning. */
  after_position?: number;
}

/** A live, ordered feed of the global log: catch-up first, then new events as they are appended. */
export interface AllSubscription extends AsyncIterable<RecordedEvent> {
  /** Stops the feed; a pending iteration ends (done) promptly. Idempotent. */
  unsubscribe(): Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically (all or none). Throws WrongExpectedVersionError when the stream is not at
   * `expected`. An empty `events` array is rejected with an Error.
   */
  append(stream_id: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Reads one stream; a stream that does not exist reads as []. */
  readStream(stream_id: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Reads the global log. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Reads the global log as readAll does, each event's data left as JSON text. */
  readAllSerialized(options?: ReadAllOptions): Promise<SerializedRecordedEvent[]>;
  /** Position of the last event in the log, or -1 for an empty log. */
  headPosition(): Promise<number>;
  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription;
  /**
   * Calls `listener` with the stream's id after each append made through this object succeeded
   * (committed, or found already made by a retry), so that a reader in the same process looks again at once rather than at its next
   * poll. Appends made by other processes call nothing here: readers keep polling for those.
   * Returns what removes the listener.
   */
  onAppended(listener: (stream_id: string) => void): () => void;
  close(): Promise<void>;
}

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly stream_id: string,
    readonly expected: ExpectedRevision,
    /** The stream's current revision, or 'no_stream'. */
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream_id}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedVersionError';
  }
}

/** Nest injection token for the EventStore port. */
export const EVENT_STORE = Symbol('EVENT_STORE');
