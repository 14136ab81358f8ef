import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import type { SystemBootstrapCommand } from './system-bootstrap.commands';
import type { SystemBootstrapEvent, SystemBootstrapped } from './system-bootstrap.events';

export interface SystemBootstrapState {
  bootstrapped: SystemBootstrapped['data'] | null;
}

export const systemBootstrapDecider: Decider<SystemBootstrapCommand, SystemBootstrapState, SystemBootstrapEvent> = {
  initialState: () => ({ bootstrapped: null }),
  decide: (command, state) => {
    if (state.bootstrapped) throw conflict('the system is bootstrapped already');
    return [{ type: 'SystemBootstrapped', data: { org_id: command.org_id, key_id: command.key_id, at: command.now } }];
  },
  evolve: (_state, event) => ({ bootstrapped: event.data }),
};
