import type { Decider, DomainEvent } from '../../domain/src';
import type { EventStore } from '../../event-store/src/event-store.port';
import { WrongExpectedVersionError } from '../../event-store/src/event-store.port';
import type { CommandContext } from './command-context';
import { toDomainEvent, toNewEvents } from './event-envelope';

export interface HandledCommand<E> {
  /** Events appended (empty when the decider decided nothing needs to change). */
  events: E[];
  /** Global position of the last appended event, or null when nothing was appended. */
  position: number | null;
  /** Stream revision after the command. -1 for a stream that still does not exist. */
  revision: number;
  /** Ids of the appended events, in order. */
  event_ids: string[];
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
