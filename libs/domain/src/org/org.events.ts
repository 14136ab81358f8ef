import { eventTypes, type DomainEvent } from '../shared/decider';

/** Stream `org-<id>`. */
export type OrgCreated = DomainEvent<'OrgCreated', { org_id: string; name: string; created_at: string }>;
export type OrgEvent = OrgCreated;
export const ORG_EVENT_TYPES = eventTypes<OrgEvent>()('OrgCreated');
