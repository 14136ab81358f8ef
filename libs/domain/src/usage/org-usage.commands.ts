import type { DomainCommand } from '../shared/decider';
import type { ResourceLimits, VmShare } from './resource-limits';

/**
 * Reserves the shares of new VMs (one, or every child of a branch at once), or a VM's new share
 * after a resize. `existing`: the org's VMs as the read models list them, used only when the
 * org's usage is opened by this command.
 */
export type ReserveVmResources = DomainCommand<'ReserveVmResources', { org_id: string; vms: VmShare[]; limits: ResourceLimits; existing: VmShare[]; now: string }>;
export type ReleaseVmResources = DomainCommand<'ReleaseVmResources', { org_id: string; vm_id: string; now: string }>;
export type ReserveCommitStorage = DomainCommand<'ReserveCommitStorage', { org_id: string; commit_id: string; bytes: number; limits: ResourceLimits; now: string }>;
export type MeasureCommitStorage = DomainCommand<'MeasureCommitStorage', { org_id: string; commit_id: string; bytes: number; now: string }>;
export type ReleaseCommitStorage = DomainCommand<'ReleaseCommitStorage', { org_id: string; commit_id: string; now: string }>;

export type OrgUsageCommand = ReserveVmResources | ReleaseVmResources | ReserveCommitStorage | MeasureCommitStorage | ReleaseCommitStorage;
