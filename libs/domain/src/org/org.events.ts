import { eventTypes, type DomainEvent } from '../shared/decider';
import type { Role } from './org-roles';

/**
 * Stream `org-<id>`: an org and its members. The org is made with its first owner; memberships
 * change on this one stream, so the rule that an org keeps an owner holds under concurrent
 * changes.
 */
export type OrgCreated = DomainEvent<'OrgCreated', { org_id: string; name: string; created_at: string }>;
export type MemberAdded = DomainEvent<'MemberAdded', { org_id: string; user_id: string; role: Role; added_at: string }>;
export type MemberRoleChanged = DomainEvent<'MemberRoleChanged', { org_id: string; user_id: string; role: Role; previous_role: Role; changed_at: string }>;
/** The user's API keys in the org stop working with it (and are revoked after it). */
export type MemberRemoved = DomainEvent<'MemberRemoved', { org_id: string; user_id: string; role: Role; removed_at: string }>;
export type OrgEvent = OrgCreated | MemberAdded | MemberRoleChanged | MemberRemoved;
export const ORG_EVENT_TYPES = eventTypes<OrgEvent>()('OrgCreated', 'MemberAdded', 'MemberRoleChanged', 'MemberRemoved');
