import type { Decider, DomainEvent } from '@arbor/domain';
import { type EventStore, type RecordedEvent, WrongExpectedVersionError } from '@arbor/event-store';
import type { CommandContext } from './command-context';
import { commandEventId, toDomainEvent, toNewEvents } from './event-envelope';

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

/**
 * Enough for a burst of concurrent writers on one hot stream (e.g. restores of one commit, each
 * recording its use): every round one of them wins, the others back off a random few ms.
 */
const MAX_ATTEMPTS = 12;

/**
 * Runs a command against an event-sourced aggregate: read its stream, fold, decide, append with
 * the exact revision read. A concurrent writer makes the append fail; the command is then decided
 * again on the fresh state, so two conflicting commands never both apply: one wins, the other
 * sees the winner's state (and usually a clear domain error).
 *
 * A command whose events are already in the stream (a retry with the same command id, e.g. the
 * same X-Idempotency-Key after a timeout, or its concurrent twin) is not decided again: that
 * would judge it against its own outcome ("vm already exists"). It gets its first result back,
 * as of when it was appended, so the caller can go on waiting for what followed.
 */
export async function handleCommand<C, S, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
  context: CommandContext,
): Promise<HandledCommand<E>> {
  for (let attempt = 1; ; attempt++) {
    const recorded = await store.readStream(streamId);
    const earlier = appendedBy(context.command_id, recorded);
    if (earlier.length) {
      const last = earlier[earlier.length - 1];
      return { events: earlier.map((r) => toDomainEvent<E>(r)), position: last.position, revision: last.revision, event_ids: earlier.map((r) => r.id), replayed: true };
    }
    const state = recorded.map((r) => toDomainEvent<E>(r)).reduce(decider.evolve, decider.initialState());
    const revision = recorded.length ? recorded[recorded.length - 1].revision : -1;
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, position: null, revision, event_ids: [] };
    try {
      const toAppend = toNewEvents(events, context);
      const result = await store.append(streamId, toAppend, revision < 0 ? 'no_stream' : revision);
      return { events, position: result.position, revision: result.next_expected_revision, event_ids: toAppend.map((e) => e.id) };
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 100)));
    }
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

/** Whether a command with this id already appended events to the stream (an earlier run of it). */
export async function commandAppended(store: EventStore, streamId: string, command_id: string): Promise<boolean> {
  return appendedBy(command_id, await store.readStream(streamId)).length > 0;
}

/** Reads and folds an aggregate without deciding anything. */
export async function loadAggregate<S, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Pick<Decider<unknown, S, E>, 'initialState' | 'evolve'>,
): Promise<{ state: S; revision: number }> {
  const recorded = await store.readStream(streamId);
  const state = recorded.map((r) => toDomainEvent<E>(r)).reduce(decider.evolve, decider.initialState());
  return { state, revision: recorded.length ? recorded[recorded.length - 1].revision : -1 };
}
