import type { DomainEvent } from '../shared/decider';
import type { Labels, VmConfig } from './vm-config';

/**
 * Events of the `vm-<id>` stream. "…Requested" events are intents the vm-worker acts on; the
 * others are facts (outcomes reported by the worker, or changes that need no machine work).
 * Schema version of every event here: 1.
 */
export type VmCreationRequested = DomainEvent<
  'VmCreationRequested',
  {
    vm_id: string;
    org_id: string;
    owner_id: string;
    config: VmConfig;
    labels: Labels | null;
    /** The org's env vars at creation time, written to /etc/environment at boot. */
    env: Record<string, string>;
    /** IPv6 address assigned by the control plane. */
    ip: string;
    requested_at: string;
  }
>;
export type VmBooted = DomainEvent<'VmBooted', { vm_id: string; driver: string; booted_at: string }>;
export type VmBootFailed = DomainEvent<'VmBootFailed', { vm_id: string; reason: string }>;
export type VmLabelsSet = DomainEvent<'VmLabelsSet', { vm_id: string; labels: Labels | null }>;
export type VmPauseRequested = DomainEvent<'VmPauseRequested', { vm_id: string }>;
export type VmPaused = DomainEvent<'VmPaused', { vm_id: string }>;
export type VmResumeRequested = DomainEvent<'VmResumeRequested', { vm_id: string }>;
export type VmResumed = DomainEvent<'VmResumed', { vm_id: string }>;
/** A requested pause or resume could not be carried out; the VM keeps its previous state. */
export type VmOperationFailed = DomainEvent<
  'VmOperationFailed',
  { vm_id: string; operation: 'pause' | 'resume' | 'delete'; reason: string }
>;
export type VmDeletionRequested = DomainEvent<'VmDeletionRequested', { vm_id: string }>;
export type VmDeleted = DomainEvent<'VmDeleted', { vm_id: string; deleted_at: string }>;
/** The host no longer runs the machine (found by the worker, e.g. when it reconciles). */
export type VmDied = DomainEvent<'VmDied', { vm_id: string; reason: string }>;

export type VmEvent =
  | VmCreationRequested
  | VmBooted
  | VmBootFailed
  | VmLabelsSet
  | VmPauseRequested
  | VmPaused
  | VmResumeRequested
  | VmResumed
  | VmOperationFailed
  | VmDeletionRequested
  | VmDeleted
  | VmDied;

export type VmEventType = VmEvent['type'];

/** Intents the vm-worker carries out on the hypervisor. */
export const VM_INTENT_TYPES = ['VmCreationRequested', 'VmPauseRequested', 'VmResumeRequested', 'VmDeletionRequested'] as const;
export type VmIntentType = (typeof VM_INTENT_TYPES)[number];
export const isVmIntent = (type: string): type is VmIntentType => (VM_INTENT_TYPES as readonly string[]).includes(type);
