import type { Labels, VmConfig } from './vm-config';

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
  now: string;
};
export type SetVmLabels = { type: 'SetVmLabels'; labels: Labels | null };
export type RequestVmStateChange = { type: 'RequestVmStateChange'; target: 'Paused' | 'Running' };
export type RequestVmDeletion = { type: 'RequestVmDeletion' };

/** Commands from the vm-worker (what the hypervisor did). */
export type RecordVmBooted = { type: 'RecordVmBooted'; driver: string; now: string };
export type RecordVmBootFailed = { type: 'RecordVmBootFailed'; reason: string };
export type RecordVmPaused = { type: 'RecordVmPaused' };
export type RecordVmResumed = { type: 'RecordVmResumed' };
export type RecordVmOperationFailed = { type: 'RecordVmOperationFailed'; operation: 'pause' | 'resume' | 'delete'; reason: string };
export type RecordVmDeleted = { type: 'RecordVmDeleted'; now: string };
export type RecordVmDied = { type: 'RecordVmDied'; reason: string };

export type VmCommand =
  | RequestVmCreation
  | SetVmLabels
  | RequestVmStateChange
  | RequestVmDeletion
  | RecordVmBooted
  | RecordVmBootFailed
  | RecordVmPaused
  | RecordVmResumed
  | RecordVmOperationFailed
  | RecordVmDeleted
  | RecordVmDied;
