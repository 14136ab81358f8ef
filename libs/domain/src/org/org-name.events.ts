import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `orgname-<name>`: an org name's reservation. Names are unique across the installation
 * (public repositories are addressed `<org name>/<repo>`): the first org to reserve a name holds
 * it for good.
 */
export type OrgNameReserved = DomainEvent<'OrgNameReserved', { name: string; org_id: string; reserved_at: string }>;
export type OrgNameEvent = OrgNameReserved;
export const ORG_NAME_EVENT_TYPES = eventTypes<OrgNameEvent>()('OrgNameReserved');
