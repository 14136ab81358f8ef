import type { Decider } from '../shared/decider';
import type { IdempotentResponseCommand } from './idempotent-response.commands';
import type { IdempotentResponseEvent, IdempotentResponseRecorded } from './idempotent-response.events';

export interface IdempotentResponseState {
  response: IdempotentResponseRecorded['data'] | null;
}

export const idempotentResponseDecider: Decider<IdempotentResponseCommand, IdempotentResponseState, IdempotentResponseEvent> = {
  initialState: () => ({ response: null }),
  // The first response stands; a concurrent twin of the request records nothing.
  decide: (command, state) => {
    if (state.response) return [];
    const { type: _, ...response } = command;
    return [{ type: 'IdempotentResponseRecorded', data: response }];
  },
  evolve: (_state, event) => ({ response: event.data }),
};
