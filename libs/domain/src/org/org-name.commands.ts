import type { DomainCommand } from '../shared/decider';

export type ReserveOrgName = DomainCommand<'ReserveOrgName', { name: string; org_id: string; now: string }>;
export type OrgNameCommand = ReserveOrgName;
