import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import type { ApiKeyCommand } from './api-key.commands';
import type { ApiKeyEvent, ApiKeyIssued } from './api-key.events';

/** none: no such key; active: it authenticates; revoked: it never will again. */
export interface ApiKeyState {
  status: 'none' | 'active' | 'revoked';
  key: Omit<ApiKeyIssued['data'], 'issued_at'> | null;
}

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyState, ApiKeyEvent> = {
  initialState: () => ({ status: 'none', key: null }),
  decide: (command, state) => {
    switch (command.type) {
      case 'IssueApiKey': {
        if (state.status !== 'none') throw conflict(`api key ${command.key_id} already exists`);
        const { type: _, now, ...key } = command;
        return [{ type: 'ApiKeyIssued', data: { ...key, issued_at: now } }];
      }
      case 'RevokeApiKey':
        if (state.status === 'none') throw notFound('api key');
        if (state.status === 'revoked') return [];
        return [{ type: 'ApiKeyRevoked', data: { key_id: state.key!.key_id, revoked_at: command.now } }];
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { issued_at: _, ...key } = event.data;
        return { status: 'active', key };
      }
      case 'ApiKeyRevoked':
        return { ...state, status: 'revoked' };
    }
  },
};
