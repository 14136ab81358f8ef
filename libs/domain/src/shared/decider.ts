/**
 * An aggregate as a decider (Emmett/Chassaing style): pure functions, no I/O.
 * decide(command, state) → events to append; evolve(state, event) → next state.
 */
export interface DomainEvent<TType extends string = string, TData = unknown> {
  type: TType;
  data: TData;
}

export interface Decider<TCommand, TState, TEvent extends DomainEvent> {
  initialState: () => TState;
  decide: (command: TCommand, state: TState) => TEvent[];
  evolve: (state: TState, event: TEvent) => TState;
}

/** Folds a stream's events into the aggregate's state. */
export function fold<TState, TEvent extends DomainEvent>(
  decider: Pick<Decider<unknown, TState, TEvent>, 'initialState' | 'evolve'>,
  events: readonly TEvent[],
): TState {
  return events.reduce(decider.evolve, decider.initialState());
}
