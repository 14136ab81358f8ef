import type { Decider, DomainEvent } from '../shared/decider';
import { fold } from '../shared/decider';

/** Given/when/then for deciders: given past events, when a command, then events or an error. */
export function deciderSpec<C, S, E extends DomainEvent>(decider: Decider<C, S, E>) {
  return {
    given: (events: E[]) => ({
      when: (command: C) => {
        const run = () => decider.decide(command, fold(decider, events));
        return {
          then: (expected: E[]) => expect(run()).toEqual(expected),
          thenThrows: (message: string | RegExp) => expect(run).toThrow(message),
        };
      },
    }),
  };
}
