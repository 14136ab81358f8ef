import type { DomainCommand } from '../shared/decider';
import type { Role } from './org-roles';

/** An org is made with its first owner. */
export type CreateOrg = DomainCommand<'CreateOrg', { org_id: string; name: string; owner_user_id: string; now: string }>;
export type AddMember = DomainCommand<'AddMember', { user_id: string; role: Role; now: string }>;
export type ChangeMemberRole = DomainCommand<'ChangeMemberRole', { user_id: string; role: Role; now: string }>;
export type RemoveMember = DomainCommand<'RemoveMember', { user_id: string; now: string }>;
export type OrgCommand = CreateOrg | AddMember | ChangeMemberRole | RemoveMember;
