import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `system-bootstrap`: the first start of an installation. A reservation: the one process
 * whose append wins creates the first org and its admin key; every other start finds it done.
 */
export type SystemBootstrapped = DomainEvent<'SystemBootstrapped', { org_id: string; key_id: string; at: string }>;
export type SystemBootstrapEvent = SystemBootstrapped;
export const SYSTEM_BOOTSTRAP_EVENT_TYPES = eventTypes<SystemBootstrapEvent>()('SystemBootstrapped');
