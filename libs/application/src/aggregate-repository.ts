import { fold, sealedFieldsOf, type Aggregate, type AnyAggregate, type DomainCommand, type DomainEvent } from '@arbor/domain';
import { WrongExpectedVersionError, type AppendResult, type EventStore, type ExpectedRevision, type NewEvent, type RecordedEvent } from '@arbor/event-store';
import { commandDuration, timed } from '@arbor/observability';
import { commandResult } from './command-result';
import type { CommandContext } from './command-context';
import { commandEventId, toDomainEvent, toNewEvents, upcast } from './event-envelope';
import { FoldedStreams } from './folded-streams';
import { EventSecrets } from './secrets/event-secrets';
import { StreamBatches, type Waiting } from './stream-batches';

export interface HandledCommand<E> {
  /** Events appended (empty when the decider decided nothing needs to change). */
  events: E[];
  /** Global position of the last appended event, or null when nothing was appended. */
  position: number | null;
  /** Stream revision after the command. -1 for a stream that still does not exist. */
  revision: number;
  /** Ids of the appended events, in order. */
  event_ids: string[];
  /** True when an earlier run of this very command (same command id) had appended them. */
  replayed?: boolean;
}

export interface LoadedAggregate<S> {
  state: S;
  /** Revision of the last event (-1: no stream yet). */
  revision: number;
  /** The stream's events as stored (upcast; secrets still sealed), for callers that need their metadata. */
  recorded: RecordedEvent[];
}

/**
 * Enough for a burst of concurrent writers on one hot stream across processes (in one process they
 * take turns: StreamBatches): every round one of them wins, the others back off a random few ms.
 */
const MAX_ATTEMPTS = 12;

/** A command waiting for its stream's turn. */
interface PendingCommand {
  aggregate: Aggregate<any, DomainCommand, any, DomainEvent>;
  command: DomainCommand;
  context: CommandContext;
  attempts: number;
}

/** What deciding one command of a batch came to, before its append (if any) has settled. */
type Decision =
  | { kind: 'answered'; result: HandledCommand<DomainEvent> }
  | { kind: 'refused'; error: unknown }
  | { kind: 'appending'; events: DomainEvent[]; expected: ExpectedRevision; append?: Promise<AppendResult> }
  | { kind: 'twin'; of: number };

/**
 * Aggregates in the log, by their entry in the table of aggregates (`Vm`, `Commit`, …):
 * `handle(Vm, id, command, context)` runs a command, `load(Vm, id)` folds a stream. The one place
 * where a stream is paired with its decider and folded, and where secrets are sealed on the way
 * into the log and opened on the way out (EventSecrets): deciders only ever see them in clear.
 */
export class AggregateRepository {
  /** Streams of aggregates without sealed fields, as last read and folded (see FoldedStreams). */
  private readonly folded = new FoldedStreams();
  /**
   * Commands on one stream take turns in this process, in batches (see StreamBatches) small
   * enough for one group commit of the SQLite store (512 appends).
   */
  private readonly batches = new StreamBatches<PendingCommand, HandledCommand<DomainEvent>>((stream, batch) => this.decideBatch(stream, batch), 256);

  constructor(
    readonly store: EventStore,
    private readonly secrets: EventSecrets = EventSecrets.NONE,
  ) {}

  /**
   * Reads the aggregate's stream, folds it, decides, and appends with the exact revision read. A
   * concurrent writer makes the append fail; the command is then decided again on the fresh
   * state, so two conflicting commands never both apply: one wins, the other sees the winner's
   * state (and usually a clear domain error).
   *
   * A command whose events are already in the stream (a retry with the same command id, e.g. the
   * same X-Idempotency-Key after a timeout, or its concurrent twin) is not decided again: that
   * would judge it against its own outcome ("vm already exists"). It gets its first result back,
   * as of when it was appended, so the caller can go on waiting for what followed.
   *
   * Commands on one stream in this process are decided in turns, in batches: each on the state
   * the ones before it leave, their appends made together (StreamBatches).
   */
  handle<Id, C extends DomainCommand, S, E extends DomainEvent>(
    aggregate: Aggregate<Id, C, S, E>,
    id: Id,
    command: C,
    context: CommandContext,
  ): Promise<HandledCommand<E>> {
    const pending: PendingCommand = { aggregate: aggregate as unknown as PendingCommand['aggregate'], command, context, attempts: 0 };
    const decided = () => this.batches.submit(aggregate.stream(id), pending) as Promise<HandledCommand<E>>;
    return timed(commandDuration, { aggregate: aggregate.name, command: command.type }, decided, commandResult);
  }

  /**
   * Decides a batch of commands on one stream, in order, each on the state the ones before it
   * leave, and appends each at the revision that state stands at (one group commit). Should an
   * append fail (another process wrote the stream), that command and every one after it, whatever
   * it came to, is decided again on the stream as it then is: they were decided on a state that
   * never came to be.
   */
  private async decideBatch(stream: string, batch: Waiting<PendingCommand, HandledCommand<DomainEvent>>[]): Promise<void> {
    let todo = batch;
    while (todo.length) {
      const { aggregate } = todo[0].item;
      const loaded = await this.loadStream(aggregate, stream);
      let { state, revision } = loaded;
      const decisions: Decision[] = [];
      const appendedHere = new Map<string, number>();
      for (const { item } of todo) {
        const earlier = appendedBy(item.context.command_id, loaded.recorded);
        const twin = appendedHere.get(item.context.command_id);
        if (earlier.length) {
          decisions.push({ kind: 'answered', result: await this.replayed(earlier) });
        } else if (twin !== undefined) {
          decisions.push({ kind: 'twin', of: twin });
        } else {
          try {
            const events = item.aggregate.decider.decide(item.command, state);
            if (events.length === 0) {
              decisions.push({ kind: 'answered', result: { events, position: null, revision, event_ids: [] } });
            } else {
              appendedHere.set(item.context.command_id, decisions.length);
              decisions.push({ kind: 'appending', events, expected: revision < 0 ? 'no_stream' : revision });
              state = fold(item.aggregate.decider, events, state);
              revision += events.length;
            }
          } catch (error) {
            decisions.push({ kind: 'refused', error });
          }
        }
      }
      const appends = await this.appendInOneGroup(stream, todo, decisions);
      const firstFailed = appends.findIndex((settled) => settled.status === 'rejected');
      const settledUpTo = firstFailed < 0 ? todo.length : firstFailed;
      const results: HandledCommand<DomainEvent>[] = [];
      for (let index = 0; index < settledUpTo; index++) {
        const decision = decisions[index];
        const { resolve, reject } = todo[index];
        if (decision.kind === 'refused') {
          reject(decision.error);
          continue;
        }
        const appended = (appends[index] as PromiseFulfilledResult<(AppendResult & { event_ids: string[] }) | null>).value;
        results[index] =
          decision.kind === 'answered'
            ? decision.result
            : decision.kind === 'twin'
              ? { ...results[decision.of], replayed: true }
              : { events: decision.events, position: appended!.position, revision: appended!.next_expected_revision, event_ids: appended!.event_ids };
        resolve(results[index]);
      }
      if (firstFailed < 0) return;
      const failure = (appends[firstFailed] as PromiseRejectedResult).reason;
      const again = todo.slice(firstFailed);
      todo = [];
      for (const waiting of again) {
        waiting.item.attempts++;
        const conflict = failure instanceof WrongExpectedVersionError || waiting !== again[0];
        if (!conflict || waiting.item.attempts >= MAX_ATTEMPTS) waiting.reject(failure);
        else todo.push(waiting);
      }
      if (todo.length) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** todo[0].item.attempts, 100)));
    }
  }

  /**
   * Seals the decided events, then hands every append to the store in one go, so they share one
   * group commit and each is checked against the revision the one before it leaves. A command whose
   * events cannot be sealed fails, and those after it are not appended: a gap left in the chain of
   * revisions could be filled by another process's append, which must fail the rest, not pass them.
   */
  private async appendInOneGroup(
    stream: string,
    todo: Waiting<PendingCommand, HandledCommand<DomainEvent>>[],
    decisions: Decision[],
  ): Promise<PromiseSettledResult<(AppendResult & { event_ids: string[] }) | null>[]> {
    const sealed = await Promise.allSettled(
      decisions.map((decision, index) => (decision.kind === 'appending' ? this.secrets.seal(toNewEvents(decision.events, todo[index].item.context)) : null)),
    );
    const unsealed = sealed.findIndex((result) => result.status === 'rejected');
    const appends = decisions.map((decision, index): Promise<(AppendResult & { event_ids: string[] }) | null> => {
      if (unsealed >= 0 && index >= unsealed) return Promise.reject(unsealed === index ? (sealed[index] as PromiseRejectedResult).reason : new Error('not appended'));
      if (decision.kind !== 'appending') return Promise.resolve(null);
      const events = (sealed[index] as PromiseFulfilledResult<NewEvent[]>).value;
      return this.store.append(stream, events, decision.expected).then((result) => ({ ...result, event_ids: events.map((e) => e.id) }));
    });
    return Promise.allSettled(appends);
  }

  /** A command's first result, as of when it was appended (see handle). */
  private async replayed(earlier: RecordedEvent[]): Promise<HandledCommand<DomainEvent>> {
    const last = earlier[earlier.length - 1];
    const opened = await this.secrets.open(earlier);
    return { events: opened.map((r) => toDomainEvent(r)), position: last.position, revision: last.revision, event_ids: earlier.map((r) => r.id), replayed: true };
  }

  /**
   * Appends events already decided (by a caller that keeps the aggregate's state itself, like the
   * worker's exec recorder), sealed like every other append.
   */
  async append(streamId: string, events: DomainEvent[], context: CommandContext, expected: ExpectedRevision): Promise<AppendResult & { event_ids: string[] }> {
    const toAppend = await this.secrets.seal(toNewEvents(events, context));
    const result = await this.store.append(streamId, toAppend, expected);
    return { ...result, event_ids: toAppend.map((e) => e.id) };
  }

  /**
   * Decides `command` on the aggregate as it stands and throws what its decider throws, appending
   * nothing: for an operation that must pass every rule before its first append (a command this
   * very command id already appended passes: it is a retry).
   */
  async check<Id, C extends DomainCommand>(aggregate: Aggregate<Id, C, any, any>, id: Id, command: C, context: CommandContext): Promise<void> {
    const { state, recorded } = await this.load(aggregate, id);
    if (appendedBy(context.command_id, recorded).length) return;
    aggregate.decider.decide(command, state);
  }

  /** Reads and folds an aggregate without deciding anything. */
  async load<Id, S, E extends DomainEvent>(aggregate: Aggregate<Id, any, S, E>, id: Id): Promise<LoadedAggregate<S>> {
    return this.loadStream(aggregate, aggregate.stream(id));
  }

  /** The same, by the stream's name (e.g. one an event recorded): `stream` must be the aggregate's. */
  async loadStream<S, E extends DomainEvent>(aggregate: Aggregate<any, any, S, E>, stream: string): Promise<LoadedAggregate<S>> {
    if (!keepsFolded(aggregate)) return this.fold(aggregate, await this.store.readStream(stream));
    const kept = this.folded.get<S>(stream);
    const since = await this.store.readStream(stream, kept ? { from_revision: kept.revision + 1 } : undefined);
    const loaded = since.length === 0 && kept ? kept : await this.fold(aggregate, since, kept);
    this.folded.set(stream, loaded);
    // A copy of the list: the kept one grows with the stream.
    return { ...loaded, recorded: [...loaded.recorded] };
  }

  /** Whether a command with this id already appended events to the aggregate (an earlier run of it). */
  async appended<Id>(aggregate: Aggregate<Id, any, any, any>, id: Id, command_id: string): Promise<boolean> {
    return appendedBy(command_id, (await this.load(aggregate, id)).recorded).length > 0;
  }

  /** Folds `stored` (the events after `from`, or the whole stream) on from `from`. */
  private async fold<S, E extends DomainEvent>(aggregate: Aggregate<any, any, S, E>, stored: RecordedEvent[], from?: LoadedAggregate<S>): Promise<LoadedAggregate<S>> {
    const recorded = [...(from?.recorded ?? []), ...stored.map(upcast)];
    const state = fold(aggregate.decider, (await this.secrets.open(stored)).map((r) => toDomainEvent<E>(r)), from?.state ?? aggregate.decider.initialState());
    return { state, revision: recorded.length ? recorded[recorded.length - 1].revision : -1, recorded };
  }
}

const keptFolded = new WeakMap<AnyAggregate, boolean>();

/** An aggregate none of whose events has a sealed field may keep its streams folded (FoldedStreams). */
function keepsFolded(aggregate: AnyAggregate): boolean {
  let keeps = keptFolded.get(aggregate);
  if (keeps === undefined) {
    keeps = aggregate.eventTypes.every((type) => sealedFieldsOf(type).length === 0);
    keptFolded.set(aggregate, keeps);
  }
  return keeps;
}

/**
 * The events a command with this id appended to the stream: they start with its first event
 * (index 0) and are contiguous (one atomic append). One hash per event type, not per event.
 */
function appendedBy(command_id: string, recorded: RecordedEvent[]): RecordedEvent[] {
  const firstIds = new Map<string, string>();
  const firstIdOf = (type: string) => firstIds.get(type) ?? firstIds.set(type, commandEventId(command_id, 0, type)).get(type)!;
  const start = recorded.findIndex((r) => r.id === firstIdOf(r.type));
  if (start < 0) return [];
  let end = start + 1;
  while (end < recorded.length && recorded[end].id === commandEventId(command_id, end - start, recorded[end].type)) end++;
  return recorded.slice(start, end);
}
