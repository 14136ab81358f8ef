import type { Decider, DomainCommand, DomainEvent } from '../shared/decider';
import { fold } from '../shared/decider';
import { DomainError, type DomainErrorKind } from '../shared/domain-error';

/**
 * Given/when/then for deciders: given past events, when a command, then the events it decides, or
 * the domain error it raises: its kind (what the client's status will be: a 404 is not a 409)
 * and, optionally, its message.
 */
export function deciderSpec<C extends DomainCommand, S, E extends DomainEvent>(decider: Decider<C, S, E>) {
  return {
    given: (events: E[]) => ({
      when: (command: C) => {
        const run = () => decider.decide(command, fold(decider, events));
        return {
          then: (expected: E[]) => expect(run()).toEqual(expected),
          thenThrows: (kind: DomainErrorKind, message?: string | RegExp) => {
            let thrown: unknown = null;
            try {
              run();
            } catch (error) {
              thrown = error;
            }
            expect(thrown).toBeInstanceOf(DomainError);
            expect((thrown as DomainError).kind).toBe(kind);
            if (message !== undefined) expect((thrown as DomainError).message).toMatch(message);
          },
        };
      },
    }),
  };
}
