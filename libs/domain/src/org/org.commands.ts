import type { DomainCommand } from '../shared/decider';

export type CreateOrg = DomainCommand<'CreateOrg', { org_id: string; name: string; now: string }>;
export type OrgCommand = CreateOrg;
