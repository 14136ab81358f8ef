import type { Decider } from '../shared/decider';
import { conflict, DomainError, notFound } from '../shared/domain-error';
import type { VmCommand } from './vm.commands';
import type { Labels, VmConfig } from './vm-config';
import type { VmEvent } from './vm.events';

/**
 * Where a VM is in its life, as the log tells it. `booting`, `running`, `paused` and `dead` are
 * the contract's VmState values; `deleting` is a VM whose destruction was asked for.
 */
export type VmLifecycle = 'none' | 'booting' | 'running' | 'paused' | 'dead' | 'deleting' | 'deleted';

export interface VmState {
  lifecycle: VmLifecycle;
  vm_id: string | null;
  org_id: string | null;
  config: VmConfig | null;
  labels: Labels | null;
  /** Written to /etc/environment when the machine is created. */
  env: Record<string, string>;
  ip: string | null;
  /** A pause or resume asked for and not yet carried out by the worker. */
  pending: 'pause' | 'resume' | null;
}

const initialState = (): VmState => ({ lifecycle: 'none', vm_id: null, org_id: null, config: null, labels: null, env: {}, ip: null, pending: null });

const vmNotFound = () => notFound('vm');

function requireExisting(state: VmState): void {
  if (state.lifecycle === 'none' || state.lifecycle === 'deleted') throw vmNotFound();
}

function decide(command: VmCommand, state: VmState): VmEvent[] {
  switch (command.type) {
    case 'RequestVmCreation': {
      if (state.lifecycle !== 'none') throw conflict('vm already exists');
      const { vm_id, org_id, owner_id, config, labels, env, ip, now } = command;
      return [{ type: 'VmCreationRequested', data: { vm_id, org_id, owner_id, config, labels, env, ip, requested_at: now } }];
    }
    case 'SetVmLabels':
      requireExisting(state);
      return [{ type: 'VmLabelsSet', data: { vm_id: state.vm_id!, labels: command.labels } }];
    case 'RequestVmStateChange':
      return decideStateChange(command.target, state);
    case 'RequestVmDeletion':
      requireExisting(state);
      if (state.lifecycle === 'deleting') return [];
      if (state.pending) throw conflict(`vm has a ${state.pending} in progress; try again when it completes`);
      return [{ type: 'VmDeletionRequested', data: { vm_id: state.vm_id! } }];

    case 'RecordVmBooted':
      if (state.lifecycle !== 'booting') return [];
      return [{ type: 'VmBooted', data: { vm_id: state.vm_id!, driver: command.driver, booted_at: command.now } }];
    case 'RecordVmBootFailed':
      if (state.lifecycle !== 'booting') return [];
      return [{ type: 'VmBootFailed', data: { vm_id: state.vm_id!, reason: command.reason } }];
    case 'RecordVmPaused':
      if (state.pending !== 'pause') return [];
      return [{ type: 'VmPaused', data: { vm_id: state.vm_id! } }];
    case 'RecordVmResumed':
      if (state.pending !== 'resume') return [];
      return [{ type: 'VmResumed', data: { vm_id: state.vm_id! } }];
    case 'RecordVmOperationFailed':
      if (command.operation === 'delete' ? state.lifecycle !== 'deleting' : state.pending !== command.operation) return [];
      return [{ type: 'VmOperationFailed', data: { vm_id: state.vm_id!, operation: command.operation, reason: command.reason } }];
    case 'RecordVmDeleted':
      if (state.lifecycle !== 'deleting') return [];
      return [{ type: 'VmDeleted', data: { vm_id: state.vm_id!, deleted_at: command.now } }];
    case 'RecordVmDied':
      if (!['booting', 'running', 'paused'].includes(state.lifecycle)) return [];
      return [{ type: 'VmDied', data: { vm_id: state.vm_id!, reason: command.reason } }];
  }
}

function decideStateChange(target: 'Paused' | 'Running', state: VmState): VmEvent[] {
  requireExisting(state);
  switch (state.lifecycle) {
    case 'booting':
      throw conflict('vm is still booting');
    case 'dead':
      throw conflict('vm is dead');
    case 'deleting':
      throw conflict('vm is being deleted');
  }
  if (state.pending) throw conflict(`vm has a ${state.pending} in progress; try again when it completes`);
  const vm_id = state.vm_id!;
  if (target === 'Paused') return state.lifecycle === 'paused' ? [] : [{ type: 'VmPauseRequested', data: { vm_id } }];
  return state.lifecycle === 'running' ? [] : [{ type: 'VmResumeRequested', data: { vm_id } }];
}

function evolve(state: VmState, event: VmEvent): VmState {
  switch (event.type) {
    case 'VmCreationRequested':
      return {
        ...state,
        lifecycle: 'booting',
        vm_id: event.data.vm_id,
        org_id: event.data.org_id,
        config: event.data.config,
        labels: event.data.labels,
        env: event.data.env,
        ip: event.data.ip,
      };
    case 'VmBooted':
      return { ...state, lifecycle: 'running' };
    case 'VmBootFailed':
    case 'VmDied':
      return { ...state, lifecycle: 'dead', pending: null };
    case 'VmLabelsSet':
      return { ...state, labels: event.data.labels };
    case 'VmPauseRequested':
      return { ...state, pending: 'pause' };
    case 'VmPaused':
      return { ...state, lifecycle: 'paused', pending: null };
    case 'VmResumeRequested':
      return { ...state, pending: 'resume' };
    case 'VmResumed':
      return { ...state, lifecycle: 'running', pending: null };
    case 'VmOperationFailed':
      return event.data.operation === 'delete' ? { ...state, lifecycle: 'dead' } : { ...state, pending: null };
    case 'VmDeletionRequested':
      return { ...state, lifecycle: 'deleting', pending: null };
    case 'VmDeleted':
      return { ...state, lifecycle: 'deleted' };
  }
}

export const vmDecider: Decider<VmCommand, VmState, VmEvent> = { initialState, decide, evolve };

export { DomainError };
