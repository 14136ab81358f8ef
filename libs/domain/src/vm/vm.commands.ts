import type { Labels, VmConfig } from './vm-config';
import type { VmOperation } from './vm.events';

/** Commands from the API (a user's intent). */
export type RequestVmCreation = {
  type: 'RequestVmCreation';
  vm_id: string;
  org_id: string;
  owner_id: string;
  config: VmConfig;
  labels: Labels | null;
  env: Record<string, string>;
  ip: string;
  /** Set when the VM starts from a commit; absent for a VM from a base image. */
  parent_commit_id?: string | null;
  grandparent_vm_id?: string | null;
  ssh_public_key?: string | null;
  now: string;
};
export type SetVmLabels = { type: 'SetVmLabels'; labels: Labels | null };
export type RequestVmStateChange = { type: 'RequestVmStateChange'; target: 'Paused' | 'Running' };
export type RequestVmDeletion = { type: 'RequestVmDeletion' };
export type RequestVmCommit = { type: 'RequestVmCommit'; commit_id: string; name: string; description: string | null; keep_paused: boolean };
export type RequestVmDiskResize = { type: 'RequestVmDiskResize'; fs_size_mib: number };

/** Commands from the vm-worker (what the hypervisor did). */
export type RecordVmBooted = { type: 'RecordVmBooted'; driver: string; now: string };
/** The machine could not be created: the node cleaned it up, so the VM is deleted too. */
export type RecordVmBootFailed = { type: 'RecordVmBootFailed'; reason: string; now: string };
export type RecordVmPaused = { type: 'RecordVmPaused' };
export type RecordVmResumed = { type: 'RecordVmResumed' };
export type RecordVmCommitted = { type: 'RecordVmCommitted'; includes_memory: boolean };
export type RecordVmDiskResized = { type: 'RecordVmDiskResized' };
export type RecordVmOperationFailed = { type: 'RecordVmOperationFailed'; operation: VmOperation; reason: string };
export type RecordVmDeleted = { type: 'RecordVmDeleted'; now: string };
export type RecordVmDied = { type: 'RecordVmDied'; reason: string };

export type VmCommand =
  | RequestVmCreation
  | SetVmLabels
  | RequestVmStateChange
  | RequestVmDeletion
  | RequestVmCommit
  | RequestVmDiskResize
  | RecordVmBooted
  | RecordVmBootFailed
  | RecordVmPaused
  | RecordVmResumed
  | RecordVmCommitted
  | RecordVmDiskResized
  | RecordVmOperationFailed
  | RecordVmDeleted
  | RecordVmDied;
