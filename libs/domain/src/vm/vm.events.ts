import { eventTypes, type DomainEvent } from '../shared/decider';
import type { Labels, VmConfig } from './vm-config';

/**
 * Events of the `vm-<id>` stream. "…Requested" events are intents the vm-worker acts on; the
 * others are facts (outcomes reported by the worker, or changes that need no machine work).
 */
export type VmCreationRequested = DomainEvent<
  'VmCreationRequested',
  {
    vm_id: string;
    org_id: string;
    owner_id: string;
    config: VmConfig;
    labels: Labels | null;
    /**
     * The owner's env vars at creation time, written to /etc/environment at boot. Each value is
     * sealed in the log with the org's key (the names stay readable).
     * @sealed "values"
     */
    env: Record<string, string>;
    /** IPv6 address assigned by the control plane. */
    ip: string;
    /** Set when the VM starts from a commit (from_commit and every branch) instead of a base image. */
    parent_commit_id: string | null;
    /** The VM the parent commit was taken from. */
    grandparent_vm_id: string | null;
    /**
     * Present (true) when the commit was reached through another org's public repository: the VM
     * may use it though the commit itself is private (whoever claims the use, API or worker).
     */
    through_public_repository?: true;
    /**
     * Present when the VM boots a custom base image (new_root named one of `POST /images`): the
     * image's id, which the driver boots instead of its built-in image (absent: the built-in one).
     */
    image_id?: string;
    /** OpenSSH public key authorized in the VM: the public half of the VM's own key pair. */
    ssh_public_key: string | null;
    /** The SSH key generation (server secret) the key pair derives from; null without a key. */
    ssh_key_generation: number | null;
    requested_at: string;
  }
>;
export type VmBooted = DomainEvent<'VmBooted', { vm_id: string; driver: string; booted_at: string }>;
/**
 * The machine is on its host's network: its IPv6 address (the contract's `ip`, where the edge
 * and SSH reach it) and its IPv4 address (for egress). Appended with VmBooted, before it.
 */
export type VmNetworkAttached = DomainEvent<'VmNetworkAttached', { vm_id: string; ipv6: string; ipv4: string }>;
/**
 * The machine could not be created. Appended together with VmDeleted (the node cleans the VM up);
 * logs written before that rule have it alone, and such a VM stays dead until deleted.
 */
export type VmBootFailed = DomainEvent<'VmBootFailed', { vm_id: string; reason: string }>;
export type VmLabelsSet = DomainEvent<'VmLabelsSet', { vm_id: string; labels: Labels | null }>;
export type VmPauseRequested = DomainEvent<'VmPauseRequested', { vm_id: string }>;
export type VmPaused = DomainEvent<'VmPaused', { vm_id: string }>;
export type VmResumeRequested = DomainEvent<'VmResumeRequested', { vm_id: string }>;
export type VmResumed = DomainEvent<'VmResumed', { vm_id: string }>;
/** Capture the VM into commit `commit_id` (disk, and memory where the driver can). */
export type VmCommitRequested = DomainEvent<
  'VmCommitRequested',
  { vm_id: string; commit_id: string; name: string; description: string | null; keep_paused: boolean }
>;
export type VmCommitted = DomainEvent<'VmCommitted', { vm_id: string; commit_id: string; includes_memory: boolean; keep_paused: boolean }>;
export type VmDiskResizeRequested = DomainEvent<'VmDiskResizeRequested', { vm_id: string; fs_size_mib: number }>;
export type VmDiskResized = DomainEvent<'VmDiskResized', { vm_id: string; fs_size_mib: number }>;
/**
 * Re-key: authorize a new key pair (of another SSH key generation) in the guest in place of the
 * VM's current one, so an old generation can be retired. Asked by the operator.
 */
export type VmSshKeyRotationRequested = DomainEvent<'VmSshKeyRotationRequested', { vm_id: string; ssh_public_key: string; ssh_key_generation: number }>;
/** The guest now authorizes the new key instead of the old one: GET ssh_key answers the new key. */
export type VmSshKeyRotated = DomainEvent<'VmSshKeyRotated', { vm_id: string; ssh_public_key: string; ssh_key_generation: number }>;
export type VmOperation = 'pause' | 'resume' | 'commit' | 'resize' | 'rekey' | 'delete';
/** A requested operation could not be carried out; the VM keeps its previous state. */
export type VmOperationFailed = DomainEvent<'VmOperationFailed', { vm_id: string; operation: VmOperation; reason: string }>;
export type VmDeletionRequested = DomainEvent<'VmDeletionRequested', { vm_id: string }>;
export type VmDeleted = DomainEvent<'VmDeleted', { vm_id: string; deleted_at: string }>;
/** The host no longer runs the machine (found by the worker, e.g. when it reconciles). */
export type VmDied = DomainEvent<'VmDied', { vm_id: string; reason: string }>;

export type VmEvent =
  | VmCreationRequested
  | VmBooted
  | VmNetworkAttached
  | VmBootFailed
  | VmLabelsSet
  | VmPauseRequested
  | VmPaused
  | VmResumeRequested
  | VmResumed
  | VmCommitRequested
  | VmCommitted
  | VmDiskResizeRequested
  | VmDiskResized
  | VmSshKeyRotationRequested
  | VmSshKeyRotated
  | VmOperationFailed
  | VmDeletionRequested
  | VmDeleted
  | VmDied;

export const VM_EVENT_TYPES = eventTypes<VmEvent>()(
  'VmCreationRequested',
  'VmBooted',
  'VmNetworkAttached',
  'VmBootFailed',
  'VmLabelsSet',
  'VmPauseRequested',
  'VmPaused',
  'VmResumeRequested',
  'VmResumed',
  'VmCommitRequested',
  'VmCommitted',
  'VmDiskResizeRequested',
  'VmDiskResized',
  'VmSshKeyRotationRequested',
  'VmSshKeyRotated',
  'VmOperationFailed',
  'VmDeletionRequested',
  'VmDeleted',
  'VmDied',
);
