import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `domain-<host name>`: a custom host name routed by the edge to a VM. The stream is the
 * name's reservation across the installation: whoever holds it, no one else can add it until it
 * is removed; after that the name is free again (the stream goes on with the next holder).
 */
export type DomainAdded = DomainEvent<
  'DomainAdded',
  {
    domain_id: string;
    /** The host name, lowercase, without a trailing dot. */
    domain: string;
    vm_id: string;
    org_id: string;
    created_at: string;
  }
>;
/**
 * The name is free again: removed by its org (`deleted`), or released because its VM was deleted
 * (`vm_deleted`).
 */
export type DomainRemoved = DomainEvent<
  'DomainRemoved',
  { domain_id: string; domain: string; vm_id: string; org_id: string; reason: 'deleted' | 'vm_deleted'; removed_at: string }
>;

export type CustomDomainEvent = DomainAdded | DomainRemoved;
export const CUSTOM_DOMAIN_EVENT_TYPES = eventTypes<CustomDomainEvent>()('DomainAdded', 'DomainRemoved');
