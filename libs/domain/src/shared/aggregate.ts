import type { Decider, DomainCommand, DomainEvent } from './decider';
import type { IntentOutcomes } from './outcomes';

/**
 * One kind of aggregate: how its streams are named, the decider that runs its commands, every type
 * of event its streams hold and, for aggregates the worker acts on, when each intent is done.
 * The aggregate repository, the projector's routing and the worker's reactors all key on it; the
 * table of every aggregate is aggregates.ts.
 */
export interface Aggregate<TId, TCommand extends DomainCommand, TState, TEvent extends DomainEvent> {
  readonly name: string;
  /** Every stream of the aggregate is `<category>-<key>`; the category (no dash in it) is unique. */
  readonly category: string;
  readonly decider: Decider<TCommand, TState, TEvent>;
  readonly eventTypes: readonly TEvent['type'][];
  readonly outcomes: IntentOutcomes<TEvent>;
  /** The stream of one aggregate instance. */
  stream(id: TId): string;
}

/** An aggregate whose id is a plain string (a uuid, a host name): its stream names give the id back. */
export interface KeyedAggregate<TCommand extends DomainCommand, TState, TEvent extends DomainEvent>
  extends Aggregate<string, TCommand, TState, TEvent> {
  /** The id a stream of this aggregate names, or null for another aggregate's stream. */
  idOf(streamId: string): string | null;
}

export type AnyAggregate = Aggregate<any, any, any, any>;
export type EventOf<TAggregate> = TAggregate extends Aggregate<any, any, any, infer TEvent> ? TEvent : never;
export type CommandOf<TAggregate> = TAggregate extends Aggregate<any, infer TCommand, any, any> ? TCommand : never;
export type StateOf<TAggregate> = TAggregate extends Aggregate<any, any, infer TState, any> ? TState : never;

interface AggregateSpec<TCommand extends DomainCommand, TState, TEvent extends DomainEvent> {
  name: string;
  category: string;
  decider: Decider<TCommand, TState, TEvent>;
  eventTypes: readonly TEvent['type'][];
  outcomes?: IntentOutcomes<TEvent>;
}

/** An aggregate named by a string id: streams `<category>-<id>`. */
export function defineAggregate<TCommand extends DomainCommand, TState, TEvent extends DomainEvent>(
  spec: AggregateSpec<TCommand, TState, TEvent>,
): KeyedAggregate<TCommand, TState, TEvent>;
/** An aggregate named by a composite id (e.g. an org and a name): streams `<category>-<key(id)>`. */
export function defineAggregate<TId, TCommand extends DomainCommand, TState, TEvent extends DomainEvent>(
  spec: AggregateSpec<TCommand, TState, TEvent> & { key: (id: TId) => string },
): Aggregate<TId, TCommand, TState, TEvent>;
export function defineAggregate(spec: AggregateSpec<any, any, any> & { key?: (id: any) => string }): AnyAggregate {
  if (spec.category.includes('-')) throw new Error(`aggregate ${spec.name}: a stream category holds no dash (${spec.category})`);
  const prefix = `${spec.category}-`;
  const { key, ...rest } = spec;
  const aggregate = { ...rest, outcomes: spec.outcomes ?? {}, stream: (id: unknown) => prefix + (key ? key(id) : String(id)) };
  if (key) return aggregate;
  const idOf = (streamId: string) => (streamId.startsWith(prefix) ? streamId.slice(prefix.length) : null);
  return { ...aggregate, idOf } as KeyedAggregate<any, any, any>;
}

/** The category of a stream: its name up to the first dash. */
export function streamCategory(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}
