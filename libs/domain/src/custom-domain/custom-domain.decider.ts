import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import type { CustomDomainCommand } from './custom-domain.commands';
import type { DomainAdded, CustomDomainEvent } from './custom-domain.events';
import { requireHostName } from './host-name';

export interface CustomDomainState {
  /** Who holds the name now (null: free). */
  held: DomainAdded['data'] | null;
}

function decide(command: CustomDomainCommand, state: CustomDomainState): CustomDomainEvent[] {
  const held = state.held;
  switch (command.type) {
    case 'AddDomain': {
      const domain = requireHostName(command.domain);
      if (held?.domain_id === command.domain_id) return []; // a retry of the add that holds it
      if (held) throw conflict(`domain '${domain}' is already in use`);
      const { domain_id, vm_id, org_id, now } = command;
      return [{ type: 'DomainAdded', data: { domain_id, domain, vm_id, org_id, created_at: now } }];
    }
    case 'RemoveDomain':
      if (!held || held.domain_id !== command.domain_id || held.org_id !== command.org_id) throw notFound('domain');
      return [removed(held, 'deleted', command.now)];
    case 'ReleaseDomain':
      return held?.vm_id === command.vm_id ? [removed(held, 'vm_deleted', command.now)] : [];
  }
}

function removed(held: DomainAdded['data'], reason: 'deleted' | 'vm_deleted', now: string): CustomDomainEvent {
  const { domain_id, domain, vm_id, org_id } = held;
  return { type: 'DomainRemoved', data: { domain_id, domain, vm_id, org_id, reason, removed_at: now } };
}

function evolve(_state: CustomDomainState, event: CustomDomainEvent): CustomDomainState {
  switch (event.type) {
    case 'DomainAdded':
      return { held: event.data };
    case 'DomainRemoved':
      return { held: null };
  }
}

export const customDomainDecider: Decider<CustomDomainCommand, CustomDomainState, CustomDomainEvent> = { initialState: () => ({ held: null }), decide, evolve };
