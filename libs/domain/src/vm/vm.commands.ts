import type { DomainCommand } from '../shared/decider';
import type { Labels } from './vm-config';
import type { VmCreationRequested, VmOperation } from './vm.events';

/** Fields a creation may leave out: the lineage of a VM from a base image, a VM without a key. */
type Optional = 'parent_commit_id' | 'grandparent_vm_id' | 'ssh_public_key' | 'ssh_key_generation' | 'through_public_repository' | 'image_id';

/** Commands from the API (a user's intent). */
export type RequestVmCreation = DomainCommand<
  'RequestVmCreation',
  Omit<VmCreationRequested['data'], 'requested_at' | Optional> & Partial<Pick<VmCreationRequested['data'], Optional>> & { now: string }
>;
export type SetVmLabels = DomainCommand<'SetVmLabels', { labels: Labels | null }>;
export type RequestVmStateChange = DomainCommand<'RequestVmStateChange', { target: 'Paused' | 'Running' }>;
export type RequestVmDeletion = DomainCommand<'RequestVmDeletion'>;
export type RequestVmCommit = DomainCommand<'RequestVmCommit', { commit_id: string; name: string; description: string | null; keep_paused: boolean }>;
export type RequestVmDiskResize = DomainCommand<'RequestVmDiskResize', { fs_size_mib: number }>;
/** From the operator: authorize a key pair of another SSH key generation instead of the VM's own. */
export type RequestVmSshKeyRotation = DomainCommand<'RequestVmSshKeyRotation', { ssh_public_key: string; ssh_key_generation: number }>;

/** Commands from the vm-worker (what the hypervisor did). */
/** network: the machine's addresses (null: a machine without a network, from before machines had one). */
export type RecordVmBooted = DomainCommand<'RecordVmBooted', { driver: string; network?: { ipv6: string; ipv4: string } | null; now: string }>;
/** The machine could not be created: the node cleaned it up, so the VM is deleted too. */
export type RecordVmBootFailed = DomainCommand<'RecordVmBootFailed', { reason: string; now: string }>;
export type RecordVmPaused = DomainCommand<'RecordVmPaused'>;
export type RecordVmResumed = DomainCommand<'RecordVmResumed'>;
export type RecordVmCommitted = DomainCommand<'RecordVmCommitted', { includes_memory: boolean }>;
export type RecordVmDiskResized = DomainCommand<'RecordVmDiskResized'>;
export type RecordVmSshKeyRotated = DomainCommand<'RecordVmSshKeyRotated'>;
export type RecordVmOperationFailed = DomainCommand<'RecordVmOperationFailed', { operation: VmOperation; reason: string }>;
export type RecordVmDeleted = DomainCommand<'RecordVmDeleted', { now: string }>;
export type RecordVmDied = DomainCommand<'RecordVmDied', { reason: string }>;

export type VmCommand =
  | RequestVmCreation
  | SetVmLabels
  | RequestVmStateChange
  | RequestVmDeletion
  | RequestVmCommit
  | RequestVmDiskResize
  | RequestVmSshKeyRotation
  | RecordVmBooted
  | RecordVmBootFailed
  | RecordVmPaused
  | RecordVmResumed
  | RecordVmCommitted
  | RecordVmDiskResized
  | RecordVmSshKeyRotated
  | RecordVmOperationFailed
  | RecordVmDeleted
  | RecordVmDied;
