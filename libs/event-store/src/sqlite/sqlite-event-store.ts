import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
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
  type SerializedRecordedEvent,
  WrongExpectedVersionError,
} from '../event-store.port';
import { actualOf, classifyRetry, retryStart, satisfies } from '../expected-revision';
import { SqliteAllSubscription } from './sqlite-all-subscription';

/**
 * A position is the row's rowid: SQLite gives each insert the largest rowid plus one, so positions
 * only ever grow, and none is handed out twice because nothing ever deletes an event (a rolled-back
 * append's position was never seen by anyone). No AUTOINCREMENT: its sequence row was one more
 * page written and fsynced with every commit (about 7 µs and a fifth of an append's WAL bytes) for
 * a guarantee that only differs once the last events are deleted. Logs created with it keep it.
 * The first event of a new log has position 1.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY,
    stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (stream_id, revision)
  );
  CREATE INDEX IF NOT EXISTS events_by_event_id ON events (event_id);
`;

/** Largest position or revision a bound can name (SQLite's LIMIT -1 means "no limit"). */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const NO_LIMIT = -1;

export interface SqliteEventStoreOptions {
  /** How often subscriptions look for events appended by other processes. Default 50 ms. */
  pollIntervalMs?: number;
  /** How long an append waits for another process's write transaction. Default 5000 ms. */
  busyTimeoutMs?: number;
}

/** The most appends one group commit takes (a bound on how long one write transaction runs). */
const MAX_GROUP = 512;

interface PendingAppend {
  stream_id: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

interface EventRow {
  position: number;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  created_at: string;
}

/**
 * The embedded event store: one SQLite table in WAL mode, `synchronous = FULL` so an acknowledged
 * append survives a power loss. Several processes may open the same file: appends take the write
 * lock up front (BEGIN IMMEDIATE) and wait for it (busy timeout), so positions are assigned and
 * committed in one global order; subscriptions wake at once for this instance's appends and poll
 * for everyone else's.
 *
 * Group commit: appends made in the same turn of the event loop share one write transaction, so
 * one fsync, each in its own savepoint (a refused append rolls back alone and fails alone). None
 * is acknowledged before the transaction that holds it has committed.
 *
 * Positions start at 1 (headPosition() is -1 for an empty log).
 */
export class SqliteEventStore implements EventStore {
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly appendUnit: Database.Transaction<(stream_id: string, events: NewEvent[], expected: ExpectedRevision) => AppendResult>;
  /** Emits 'appended' after each group commit through this instance (to wake its subscriptions), then 'stream' for each append in it. */
  private readonly signals = new EventEmitter().setMaxListeners(0);
  private readonly subscriptions = new Set<SqliteAllSubscription>();
  private readonly pollIntervalMs: number;
  private readonly groupCommit: Database.Transaction<(group: PendingAppend[]) => unknown[]>;
  private pending: PendingAppend[] = [];

  static open(filePath: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    // The busy timeout is set on open, before the first statement that may need a lock.
    const db = new Database(filePath, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    return new SqliteEventStore(db, options.pollIntervalMs ?? 50);
  }

  private constructor(
    private readonly db: Database.Database,
    pollIntervalMs: number,
  ) {
    this.pollIntervalMs = pollIntervalMs;
    this.statements = prepareStatements(db);
    this.appendUnit = db.transaction((stream_id, events, expected) => this.appendInTransaction(stream_id, events, expected));
    // Inside the group's transaction each appendUnit call runs as a savepoint (better-sqlite3 nests them).
    this.groupCommit = db.transaction((group: PendingAppend[]) =>
      group.map((append) => resultOrRefusal(() => this.appendUnit(append.stream_id, append.events, append.expected))),
    );
  }

  append(stream_id: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error(`append to ${stream_id}: no events`));
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.commitPending());
      this.pending.push({ stream_id, events, expected, resolve, reject });
    });
  }

  /** Commits the appends waiting for this turn in groups, then answers each. */
  private commitPending(): void {
    while (this.pending.length) {
      const group = this.pending.splice(0, MAX_GROUP);
      let outcomes: unknown[];
      try {
        // IMMEDIATE: take the write lock before reading any stream's revision, so no other
        // process can append between the check and the insert. An append alone needs no
        // savepoint of its own: if it is refused, its transaction rolls back and holds nothing else.
        const [first] = group;
        outcomes =
          group.length === 1
            ? [resultOrRefusal(() => this.appendUnit.immediate(first.stream_id, first.events, first.expected))]
            : this.groupCommit.immediate(group);
      } catch (error) {
        group.forEach((append) => append.reject(error)); // nothing of the group was committed
        continue;
      }
      group.forEach((append, index) => {
        const outcome = outcomes[index] as AppendResult | { refused: unknown };
        if ('refused' in outcome) append.reject(outcome.refused);
        else append.resolve(outcome);
      });
      this.signals.emit('appended');
      group.forEach((append, index) => {
        if (!('refused' in (outcomes[index] as object))) this.signals.emit('stream', append.stream_id);
      });
    }
  }

  async readStream(stream_id: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.max_count ?? NO_LIMIT;
    const rows =
      options.direction === 'backwards'
        ? this.statements.readStreamBackwards.all(stream_id, options.from_revision ?? UNBOUNDED, limit)
        : this.statements.readStreamForwards.all(stream_id, options.from_revision ?? 0, limit);
    return rows.map(toRecordedEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllRows(options).map(toRecordedEvent);
  }

  async readAllSerialized(options: ReadAllOptions = {}): Promise<SerializedRecordedEvent[]> {
    return this.readAllRows(options).map(toSerializedEvent);
  }

  private readAllRows(options: ReadAllOptions): EventRow[] {
    const limit = options.max_count ?? NO_LIMIT;
    return options.direction === 'backwards'
      ? this.statements.readAllBackwards.all(options.before_position ?? UNBOUNDED, limit)
      : this.statements.readAllForwards.all(options.after_position ?? -1, limit);
  }

  async headPosition(): Promise<number> {
    return this.statements.headPosition.get() ?? -1;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    const subscription = new SqliteAllSubscription({
      afterPosition: options.after_position ?? -1,
      readAfter: (position, limit) => this.readAll({ after_position: position, max_count: limit }),
      signals: this.signals,
      pollIntervalMs: this.pollIntervalMs,
      onStopped: () => this.subscriptions.delete(subscription),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: (stream_id: string) => void): () => void {
    this.signals.on('stream', listener);
    return () => this.signals.off('stream', listener);
  }

  async close(): Promise<void> {
    if (this.db.open) this.commitPending(); // appends already made are committed, not dropped
    await Promise.all([...this.subscriptions].map((subscription) => subscription.unsubscribe()));
    if (this.db.open) this.db.close();
  }

  private appendInTransaction(stream_id: string, events: NewEvent[], expected: ExpectedRevision): AppendResult {
    const current = this.statements.currentRevision.get(stream_id) ?? -1;
    const replay = this.idempotentReplay(stream_id, events, expected);
    if (replay === 'conflict') throw new WrongExpectedVersionError(stream_id, expected, actualOf(current));
    if (replay) return replay;
    if (!satisfies(expected, current)) throw new WrongExpectedVersionError(stream_id, expected, actualOf(current));

    const created_at = new Date().toISOString();
    let position = -1;
    events.forEach((event, index) => {
      const inserted = this.statements.insert.run({
        stream_id,
        revision: current + 1 + index,
        event_id: event.id,
        type: event.type,
        data: JSON.stringify(event.data ?? null),
        metadata: JSON.stringify(event.metadata),
        created_at,
      });
      position = Number(inserted.lastInsertRowid);
    });
    return { next_expected_revision: current + events.length, position };
  }

  /**
   * EventStoreDB's rule: a batch whose ids are already in the stream where `expected` puts them is
   * a retry and returns the first result; a batch that only partly matches is a conflict.
   */
  private idempotentReplay(stream_id: string, events: NewEvent[], expected: ExpectedRevision): AppendResult | 'conflict' | undefined {
    const start = retryStart(expected, () => this.statements.revisionOfEvent.get(stream_id, events[0].id) ?? null);
    if (start === null || start < 0) return undefined;
    const stored = this.statements.idsFrom.all(stream_id, start, events.length);
    const verdict = classifyRetry(stored.map((row) => row.event_id), events);
    if (verdict !== 'retry') return verdict === 'conflict' ? 'conflict' : undefined;
    const last = stored[stored.length - 1];
    return { next_expected_revision: start + events.length - 1, position: last.position };
  }
}

/** What an append returned, or what refused it (a refused append has rolled back whatever it wrote). */
function resultOrRefusal(append: () => AppendResult): AppendResult | { refused: unknown } {
  try {
    return append();
  } catch (error) {
    return { refused: error };
  }
}

function prepareStatements(db: Database.Database) {
  const columns = 'position, stream_id, revision, event_id, type, data, metadata, created_at';
  return {
    insert: db.prepare<{ stream_id: string; revision: number; event_id: string; type: string; data: string; metadata: string; created_at: string }>(
      `INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created_at)
       VALUES (@stream_id, @revision, @event_id, @type, @data, @metadata, @created_at)`,
    ),
    currentRevision: db.prepare<[string], number | null>('SELECT MAX(revision) FROM events WHERE stream_id = ?').pluck(),
    revisionOfEvent: db
      // Through the event id (a handful of rows at most): left to itself the planner walks the
      // whole stream by (stream_id, revision) and reads each row, which grows with the stream.
      .prepare<[string, string], number | null>('SELECT MIN(revision) FROM events INDEXED BY events_by_event_id WHERE stream_id = ? AND event_id = ?')
      .pluck(),
    idsFrom: db.prepare<[string, number, number], Pick<EventRow, 'event_id' | 'position'>>(
      'SELECT event_id, position FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?',
    ),
    readStreamForwards: db.prepare<[string, number, number], EventRow>(
      `SELECT ${columns} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?`,
    ),
    readStreamBackwards: db.prepare<[string, number, number], EventRow>(
      `SELECT ${columns} FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`,
    ),
    readAllForwards: db.prepare<[number, number], EventRow>(
      `SELECT ${columns} FROM events WHERE position > ? ORDER BY position LIMIT ?`,
    ),
    readAllBackwards: db.prepare<[number, number], EventRow>(
      `SELECT ${columns} FROM events WHERE position < ? ORDER BY position DESC LIMIT ?`,
    ),
    headPosition: db.prepare<[], number | null>('SELECT MAX(position) FROM events').pluck(),
  };
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    stream_id: row.stream_id,
    revision: row.revision,
    position: row.position,
    created_at: row.created_at,
  };
}

/** The row as it is stored: its data JSON as written (JSON.stringify, so the same text readAll's data serializes to). */
function toSerializedEvent(row: EventRow): SerializedRecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data_json: row.data,
    metadata: JSON.parse(row.metadata),
    stream_id: row.stream_id,
    revision: row.revision,
    position: row.position,
    created_at: row.created_at,
  };
}
