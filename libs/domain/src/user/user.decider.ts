import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import type { UserCommand } from './user.commands';
import type { UserEvent } from './user.events';

export interface UserState {
  user_id: string | null;
  email: string | null;
  email_verified: boolean;
  registered_at: string | null;
  verified_at: string | null;
}

export const userDecider: Decider<UserCommand, UserState, UserEvent> = {
  initialState: () => ({ user_id: null, email: null, email_verified: false, registered_at: null, verified_at: null }),
  decide: (command, state) => {
    switch (command.type) {
      case 'RegisterUser':
        if (state.user_id === null) return [{ type: 'UserRegistered', data: { user_id: command.user_id, email: command.email, registered_at: command.now } }];
        if (state.email === command.email) return [];
        throw conflict(`user ${command.user_id} is registered already`);
      case 'VerifyEmail': {
        if (state.user_id !== null && state.email !== command.email) throw conflict(`user ${command.user_id} has another address`);
        if (state.email_verified) return [];
        const verified: UserEvent = { type: 'EmailVerified', data: { user_id: command.user_id, email: command.email, verified_at: command.now } };
        if (state.user_id !== null) return [verified];
        return [{ type: 'UserRegistered', data: { user_id: command.user_id, email: command.email, registered_at: command.now } }, verified];
      }
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'UserRegistered':
        return { ...state, user_id: event.data.user_id, email: event.data.email, registered_at: event.data.registered_at };
      case 'EmailVerified':
        return { ...state, email_verified: true, verified_at: event.data.verified_at };
    }
  },
};
