import type { DomainEvent } from './decider';
import type { DomainError } from './domain-error';

/** How an intent ended: done, or not done for the reason the error gives. */
export type Outcome = { succeeded: true } | { succeeded: false; error: DomainError };

export const succeeded: Outcome = { succeeded: true };
export const failedWith = (error: DomainError): Outcome => ({ succeeded: false, error });

/** The events that end one intent, each with what it means. */
export type OutcomeRules<TEvent extends DomainEvent> = {
  [TType in TEvent['type']]?: (event: Extract<TEvent, { type: TType }>) => Outcome;
};

/**
 * When is an operation done? For each intent of an aggregate (an event asking the worker for
 * work), the events that end it. An aggregate carries out one intent at a time, so the first of
 * those events after the intent settles it; the api waits on exactly this rule for every operation.
 */
export type IntentOutcomes<TEvent extends DomainEvent> = {
  [TType in TEvent['type']]?: OutcomeRules<TEvent>;
};

/** What `event` means for `intent`, or null when it does not end it. */
export function outcomeOf<TEvent extends DomainEvent>(outcomes: IntentOutcomes<TEvent>, intent: TEvent['type'], event: TEvent): Outcome | null {
  const rule = outcomes[intent]?.[event.type as TEvent['type']] as ((event: TEvent) => Outcome) | undefined;
  return rule ? rule(event) : null;
}

/** The intents of an aggregate: the event types its outcome rules are written for. */
export function intentTypes<TEvent extends DomainEvent>(outcomes: IntentOutcomes<TEvent>): TEvent['type'][] {
  return Object.keys(outcomes) as TEvent['type'][];
}
