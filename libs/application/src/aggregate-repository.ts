import { fold, type Aggregate, type DomainCommand, type DomainEvent } from '@arbor/domain';
import { WrongExpectedVersionError, type AppendResult, type EventStore, type ExpectedRevision, type RecordedEvent } from '@arbor/event-store';
import { commandDuration, timed } from '@arbor/observability';
import { commandResult } from './command-result';
import type { CommandContext } from './command-context';
import { commandEventId, toDomainEvent, toNewEvents, upcast } from './event-envelope';
import { EventSecrets } from './secrets/event-secrets';

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
 * Enough for a burst of concurrent writers on one hot stream (e.g. restores of one commit, each
 * recording its use): every round one of them wins, the others back off a random few ms.
 */
const MAX_ATTEMPTS = 12;

/**
 * Aggregates in the log, by their entry in the table of aggregates (`Vm`, `Commit`, …):
 * `handle(Vm, id, command, context)` runs a command, `load(Vm, id)` folds a stream. The one place
 * where a stream is paired with its decider and folded, and where secrets are sealed on the way
 * into the log and opened on the way out (EventSecrets): deciders only ever see them in clear.
 */
export class AggregateRepository {
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
   */
  handle<Id, C extends DomainCommand, S, E extends DomainEvent>(
    aggregate: Aggregate<Id, C, S, E>,
    id: Id,
    command: C,
    context: CommandContext,
  ): Promise<HandledCommand<E>> {
    return timed(commandDuration, { aggregate: aggregate.name, command: command.type }, () => this.decideAndAppend(aggregate, id, command, context), commandResult);
  }

  private async decideAndAppend<Id, C extends DomainCommand, S, E extends DomainEvent>(
    aggregate: Aggregate<Id, C, S, E>,
    id: Id,
    command: C,
    context: CommandContext,
  ): Promise<HandledCommand<E>> {
    const streamId = aggregate.stream(id);
    for (let attempt = 1; ; attempt++) {
      const recorded = await this.store.readStream(streamId);
      const earlier = appendedBy(context.command_id, recorded);
      if (earlier.length) {
        const last = earlier[earlier.length - 1];
        const opened = await this.secrets.open(earlier);
        return { events: opened.map((r) => toDomainEvent<E>(r)), position: last.position, revision: last.revision, event_ids: earlier.map((r) => r.id), replayed: true };
      }
      const { state, revision } = await this.fold(aggregate, recorded);
      const events = aggregate.decider.decide(command, state);
      if (events.length === 0) return { events, position: null, revision, event_ids: [] };
      try {
        const result = await this.append(streamId, events, context, revision < 0 ? 'no_stream' : revision);
        return { events, position: result.position, revision: result.next_expected_revision, event_ids: result.event_ids };
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 100)));
      }
    }
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
    const recorded = await this.store.readStream(aggregate.stream(id));
    if (appendedBy(context.command_id, recorded).length) return;
    aggregate.decider.decide(command, (await this.fold(aggregate, recorded)).state);
  }

  /** Reads and folds an aggregate without deciding anything. */
  async load<Id, S, E extends DomainEvent>(aggregate: Aggregate<Id, any, S, E>, id: Id): Promise<LoadedAggregate<S>> {
    return this.loadStream(aggregate, aggregate.stream(id));
  }

  /** The same, by the stream's name (e.g. one an event recorded): `stream` must be the aggregate's. */
  async loadStream<S, E extends DomainEvent>(aggregate: Aggregate<any, any, S, E>, stream: string): Promise<LoadedAggregate<S>> {
    return this.fold(aggregate, await this.store.readStream(stream));
  }

  /** Whether a command with this id already appended events to the aggregate (an earlier run of it). */
  async appended<Id>(aggregate: Aggregate<Id, any, any, any>, id: Id, command_id: string): Promise<boolean> {
    return appendedBy(command_id, await this.store.readStream(aggregate.stream(id))).length > 0;
  }

  private async fold<S, E extends DomainEvent>(aggregate: Aggregate<any, any, S, E>, stored: RecordedEvent[]): Promise<LoadedAggregate<S>> {
    const recorded = stored.map(upcast);
    const state = fold(aggregate.decider, (await this.secrets.open(stored)).map((r) => toDomainEvent<E>(r)));
    return { state, revision: recorded.length ? recorded[recorded.length - 1].revision : -1, recorded };
  }
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
