// An aggregate as a decider (Emmett/Chassaing style): pure functions, no I/O.
// decide(command, state) → events to append; evolve(state, event) → next state.
// Events are `{ type, data }`; commands are flat: `{ type, ...fields }`, every one of them.
// (Line comments: a JSDoc here would become the catalogue's description of every event type
// that has none of its own.)

export interface DomainEvent<TType extends string = string, TData = unknown> {
  type: TType;
  data: TData;
}

export type DomainCommand<TType extends string = string, TFields extends object = object> = { type: TType } & TFields;

export interface Decider<TCommand extends DomainCommand, TState, TEvent extends DomainEvent> {
  initialState: () => TState;
  decide: (command: TCommand, state: TState) => TEvent[];
  evolve: (state: TState, event: TEvent) => TState;
}

/** Folds events into the aggregate's state: from the start, or on from `state`. */
export function fold<TState, TEvent extends DomainEvent>(
  decider: Pick<Decider<DomainCommand, TState, TEvent>, 'initialState' | 'evolve'>,
  events: readonly TEvent[],
  state: TState = decider.initialState(),
): TState {
  return events.reduce(decider.evolve, state);
}

/**
 * Every type of a union of events, checked complete when it compiles: leaving one out is an error
 * naming it. Usage: `eventTypes<VmEvent>()('VmCreationRequested', …)`.
 */
export function eventTypes<TEvent extends DomainEvent>() {
  return <const TTypes extends readonly TEvent['type'][]>(
    ...types: TTypes & ([Exclude<TEvent['type'], TTypes[number]>] extends [never] ? unknown : { missing: Exclude<TEvent['type'], TTypes[number]> })
  ): readonly TEvent['type'][] => types;
}
