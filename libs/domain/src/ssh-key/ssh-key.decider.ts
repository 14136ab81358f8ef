import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import type { SshKeyCommand } from './ssh-key.commands';
import type { SshKeyBound, SshKeyEvent } from './ssh-key.events';

export interface SshKeyState {
  /** The binding in force, or null for a key no account holds. */
  binding: SshKeyBound['data'] | null;
}

/** The message of the contract's 409: a key belongs to one account. */
export const SSH_KEY_TAKEN = 'this SSH key is bound to another e-mail address';

export const sshKeyDecider: Decider<SshKeyCommand, SshKeyState, SshKeyEvent> = {
  initialState: () => ({ binding: null }),
  decide: (command, state) => {
    switch (command.type) {
      case 'BindSshKey': {
        if (state.binding?.user_id === command.user_id) return [];
        if (state.binding) throw conflict(SSH_KEY_TAKEN);
        const { type: _, now, ...binding } = command;
        return [{ type: 'SshKeyBound', data: { ...binding, bound_at: now } }];
      }
      case 'UnbindSshKey': {
        if (!state.binding) throw notFound('ssh key');
        const { key_id, fingerprint, user_id } = state.binding;
        return [{ type: 'SshKeyUnbound', data: { key_id, fingerprint, user_id, unbound_at: command.now } }];
      }
    }
  },
  evolve: (_state, event) => {
    switch (event.type) {
      case 'SshKeyBound':
        return { binding: event.data };
      case 'SshKeyUnbound':
        return { binding: null };
    }
  },
};
