import { eventTypes, type DomainEvent } from '../shared/decider';
import type { VmShare } from './resource-limits';

/**
 * Stream `usage-<org id>`: what an org holds against its quotas. Every reservation is decided on
 * this one stream with the exact revision read, so two requests racing for the org's last slot
 * cannot both pass: one append wins, the other is decided again on the new usage and refused.
 * VMs reserve their share before their VmCreationRequested and release it once their machine is
 * gone; commits reserve the most they can take before the capture and record what they took.
 */

/**
 * The first reservation of an org opens its usage with the VMs it already had (made before usage
 * was recorded), so they count too.
 */
export type OrgUsageOpened = DomainEvent<'OrgUsageOpened', { org_id: string; vms: VmShare[]; opened_at: string }>;
/** A VM's machine shape counts against the org (again, with new values, after a resize is asked). */
export type VmResourcesReserved = DomainEvent<'VmResourcesReserved', VmShare & { org_id: string; reserved_at: string }>;
/** The VM is gone (deleted, or it never booted): its share is free again. */
export type VmResourcesReleased = DomainEvent<'VmResourcesReleased', { org_id: string; vm_id: string; released_at: string }>;
/** A commit is about to be taken: the most it can hold (its VM's disk and memory) counts until it is measured. */
export type CommitStorageReserved = DomainEvent<'CommitStorageReserved', { org_id: string; commit_id: string; bytes: number; reserved_at: string }>;
/** What the commit's snapshot takes on the host's disk (allocated bytes of its own files), measured once taken. */
export type CommitStorageMeasured = DomainEvent<'CommitStorageMeasured', { org_id: string; commit_id: string; bytes: number; measured_at: string }>;
/** The commit was deleted, or never taken: its bytes no longer count. */
export type CommitStorageReleased = DomainEvent<'CommitStorageReleased', { org_id: string; commit_id: string; released_at: string }>;

export type OrgUsageEvent = OrgUsageOpened | VmResourcesReserved | VmResourcesReleased | CommitStorageReserved | CommitStorageMeasured | CommitStorageReleased;

export const ORG_USAGE_EVENT_TYPES = eventTypes<OrgUsageEvent>()(
  'OrgUsageOpened',
  'VmResourcesReserved',
  'VmResourcesReleased',
  'CommitStorageReserved',
  'CommitStorageMeasured',
  'CommitStorageReleased',
);
