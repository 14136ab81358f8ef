import type { Decider } from '../shared/decider';
import { conflict, invalid, notFound } from '../shared/domain-error';
import type { VmCommand } from './vm.commands';
import type { Labels, VmConfig } from './vm-config';
import type { VmEvent } from './vm.events';

/**
 * Where a VM is in its life, as the log tells it. `booting`, `running`, `paused` and `dead` are
 * the contract's VmState values; `deleting` is a VM whose destruction was asked for.
 */
export type VmLifecycle = 'none' | 'booting' | 'running' | 'paused' | 'dead' | 'deleting' | 'deleted';

/** An operation asked of the worker and not yet carried out. One at a time per VM. */
export type PendingVmOperation =
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'commit'; commit_id: string; keep_paused: boolean }
  | { kind: 'resize'; fs_size_mib: number }
  | { kind: 'rekey'; ssh_public_key: string; ssh_key_generation: number };

export interface VmState {
  lifecycle: VmLifecycle;
  vm_id: string | null;
  org_id: string | null;
  owner_id: string | null;
  config: VmConfig | null;
  labels: Labels | null;
  /** Written to /etc/environment when the machine is created. */
  env: Record<string, string>;
  ip: string | null;
  /** The commit the VM starts from (null: from its base image). */
  parent_commit_id: string | null;
  /** The VM that commit was taken from. */
  grandparent_vm_id: string | null;
  /** The commit was reached through another org's public repository (see VmCreationRequested). */
  through_public_repository: boolean;
  /** The custom base image a root VM boots (null: the driver's built-in one, or a commit's). */
  image_id: string | null;
  ssh_public_key: string | null;
  /** The SSH key generation the VM's key pair derives from (null: no key). */
  ssh_key_generation: number | null;
  pending: PendingVmOperation | null;
}

const initialState = (): VmState => ({
  lifecycle: 'none',
  vm_id: null,
  org_id: null,
  owner_id: null,
  config: null,
  labels: null,
  env: {},
  ip: null,
  parent_commit_id: null,
  grandparent_vm_id: null,
  through_public_repository: false,
  image_id: null,
  ssh_public_key: null,
  ssh_key_generation: null,
  pending: null,
});

function requireExisting(state: VmState): void {
  if (state.lifecycle === 'none' || state.lifecycle === 'deleted') throw notFound('vm');
}

/** The machine must be up (running or paused) and free of other operations. */
function requireOperable(state: VmState): void {
  requireExisting(state);
  switch (state.lifecycle) {
    case 'booting':
      throw conflict('vm is still booting');
    case 'dead':
      throw conflict('vm is dead');
    case 'deleting':
      throw conflict('vm is being deleted');
  }
  if (state.pending) throw conflict(`vm has a ${state.pending.kind} in progress; try again when it completes`);
}

function decide(command: VmCommand, state: VmState): VmEvent[] {
  switch (command.type) {
    case 'RequestVmCreation': {
      if (state.lifecycle !== 'none') throw conflict('vm already exists');
      const { vm_id, org_id, owner_id, config, labels, env, ip, now } = command;
      const lineage = {
        parent_commit_id: command.parent_commit_id ?? null,
        grandparent_vm_id: command.grandparent_vm_id ?? null,
        ...(command.through_public_repository ? { through_public_repository: true as const } : {}),
        ...(command.image_id ? { image_id: command.image_id } : {}),
      };
      const key = { ssh_public_key: command.ssh_public_key ?? null, ssh_key_generation: command.ssh_public_key ? (command.ssh_key_generation ?? null) : null };
      if (key.ssh_public_key && key.ssh_key_generation === null) throw invalid('an SSH public key needs the generation it derives from');
      const data = { vm_id, org_id, owner_id, config, labels, env, ip, ...lineage, ...key, requested_at: now };
      return [{ type: 'VmCreationRequested', data }];
    }
    case 'SetVmLabels':
      requireExisting(state);
      return [{ type: 'VmLabelsSet', data: { vm_id: state.vm_id!, labels: command.labels } }];
    case 'RequestVmStateChange': {
      requireOperable(state);
      const vm_id = state.vm_id!;
      if (command.target === 'Paused') return state.lifecycle === 'paused' ? [] : [{ type: 'VmPauseRequested', data: { vm_id } }];
      return state.lifecycle === 'running' ? [] : [{ type: 'VmResumeRequested', data: { vm_id } }];
    }
    case 'RequestVmCommit': {
      requireOperable(state);
      const { commit_id, name, description, keep_paused } = command;
      return [{ type: 'VmCommitRequested', data: { vm_id: state.vm_id!, commit_id, name, description, keep_paused } }];
    }
    case 'RequestVmDiskResize': {
      requireOperable(state);
      const current = state.config!.fs_size_mib;
      if (command.fs_size_mib <= current) throw invalid(`fs_size_mib must be larger than the current size (${current} MiB)`);
      return [{ type: 'VmDiskResizeRequested', data: { vm_id: state.vm_id!, fs_size_mib: command.fs_size_mib } }];
    }
    case 'RequestVmSshKeyRotation': {
      requireOperable(state);
      // The worker writes the key into the guest's files, which a frozen machine cannot take.
      if (state.lifecycle !== 'running') throw conflict('vm is paused; resume it to re-key it');
      if (state.ssh_public_key === null) throw conflict('vm has no SSH key to rotate');
      const { ssh_public_key, ssh_key_generation } = command;
      if (ssh_key_generation === state.ssh_key_generation) return [];
      return [{ type: 'VmSshKeyRotationRequested', data: { vm_id: state.vm_id!, ssh_public_key, ssh_key_generation } }];
    }
    case 'RequestVmDeletion':
      requireExisting(state);
      if (state.lifecycle === 'deleting') return [];
      if (state.pending) throw conflict(`vm has a ${state.pending.kind} in progress; try again when it completes`);
      return [{ type: 'VmDeletionRequested', data: { vm_id: state.vm_id! } }];

    case 'RecordVmBooted': {
      if (state.lifecycle !== 'booting') return [];
      const vm_id = state.vm_id!;
      const booted: VmEvent = { type: 'VmBooted', data: { vm_id, driver: command.driver, booted_at: command.now } };
      return command.network ? [{ type: 'VmNetworkAttached', data: { vm_id, ...command.network } }, booted] : [booted];
    }
    case 'RecordVmBootFailed':
      if (state.lifecycle !== 'booting') return [];
      // The node cleans up a VM that failed to boot (docs/api-behaviour.md#vm-lifecycle: it disappears); the failure
      // event keeps the reason, the deletion in the same append takes it out of every list.
      return [
        { type: 'VmBootFailed', data: { vm_id: state.vm_id!, reason: command.reason } },
        { type: 'VmDeleted', data: { vm_id: state.vm_id!, deleted_at: command.now } },
      ];
    case 'RecordVmPaused':
      if (state.pending?.kind !== 'pause') return [];
      return [{ type: 'VmPaused', data: { vm_id: state.vm_id! } }];
    case 'RecordVmResumed':
      if (state.pending?.kind !== 'resume') return [];
      return [{ type: 'VmResumed', data: { vm_id: state.vm_id! } }];
    case 'RecordVmCommitted': {
      const pending = state.pending;
      if (pending?.kind !== 'commit') return [];
      const { commit_id, keep_paused } = pending;
      return [{ type: 'VmCommitted', data: { vm_id: state.vm_id!, commit_id, includes_memory: command.includes_memory, keep_paused } }];
    }
    case 'RecordVmDiskResized': {
      const pending = state.pending;
      if (pending?.kind !== 'resize') return [];
      return [{ type: 'VmDiskResized', data: { vm_id: state.vm_id!, fs_size_mib: pending.fs_size_mib } }];
    }
    case 'RecordVmSshKeyRotated': {
      const pending = state.pending;
      if (pending?.kind !== 'rekey') return [];
      const { ssh_public_key, ssh_key_generation } = pending;
      return [{ type: 'VmSshKeyRotated', data: { vm_id: state.vm_id!, ssh_public_key, ssh_key_generation } }];
    }
    case 'RecordVmOperationFailed':
      if (command.operation === 'delete' ? state.lifecycle !== 'deleting' : state.pending?.kind !== command.operation) return [];
      return [{ type: 'VmOperationFailed', data: { vm_id: state.vm_id!, operation: command.operation, reason: command.reason } }];
    case 'RecordVmDeleted':
      if (state.lifecycle !== 'deleting') return [];
      return [{ type: 'VmDeleted', data: { vm_id: state.vm_id!, deleted_at: command.now } }];
    case 'RecordVmDied':
      if (!['booting', 'running', 'paused'].includes(state.lifecycle)) return [];
      return [{ type: 'VmDied', data: { vm_id: state.vm_id!, reason: command.reason } }];
  }
}

function evolve(state: VmState, event: VmEvent): VmState {
  switch (event.type) {
    case 'VmCreationRequested': {
      const d = event.data;
      return {
        ...state,
        lifecycle: 'booting',
        vm_id: d.vm_id,
        org_id: d.org_id,
        owner_id: d.owner_id,
        config: d.config,
        labels: d.labels,
        env: d.env,
        ip: d.ip,
        parent_commit_id: d.parent_commit_id ?? null,
        grandparent_vm_id: d.grandparent_vm_id ?? null,
        through_public_repository: d.through_public_repository === true,
        image_id: d.image_id ?? null,
        ssh_public_key: d.ssh_public_key ?? null,
        ssh_key_generation: d.ssh_key_generation ?? null,
      };
    }
    case 'VmBooted':
      return { ...state, lifecycle: 'running' };
    case 'VmNetworkAttached':
      return { ...state, ip: event.data.ipv6 };
    case 'VmBootFailed':
    case 'VmDied':
      return { ...state, lifecycle: 'dead', pending: null };
    case 'VmLabelsSet':
      return { ...state, labels: event.data.labels };
    case 'VmPauseRequested':
      return { ...state, pending: { kind: 'pause' } };
    case 'VmPaused':
      return { ...state, lifecycle: 'paused', pending: null };
    case 'VmResumeRequested':
      return { ...state, pending: { kind: 'resume' } };
    case 'VmResumed':
      return { ...state, lifecycle: 'running', pending: null };
    case 'VmCommitRequested':
      return { ...state, pending: { kind: 'commit', commit_id: event.data.commit_id, keep_paused: event.data.keep_paused } };
    case 'VmCommitted':
      return { ...state, lifecycle: event.data.keep_paused ? 'paused' : state.lifecycle, pending: null };
    case 'VmDiskResizeRequested':
      return { ...state, pending: { kind: 'resize', fs_size_mib: event.data.fs_size_mib } };
    case 'VmDiskResized':
      return { ...state, config: { ...state.config!, fs_size_mib: event.data.fs_size_mib }, pending: null };
    case 'VmSshKeyRotationRequested':
      return { ...state, pending: { kind: 'rekey', ssh_public_key: event.data.ssh_public_key, ssh_key_generation: event.data.ssh_key_generation } };
    case 'VmSshKeyRotated':
      return { ...state, ssh_public_key: event.data.ssh_public_key, ssh_key_generation: event.data.ssh_key_generation, pending: null };
    case 'VmOperationFailed':
      return event.data.operation === 'delete' ? { ...state, lifecycle: 'dead' } : { ...state, pending: null };
    case 'VmDeletionRequested':
      return { ...state, lifecycle: 'deleting', pending: null };
    case 'VmDeleted':
      return { ...state, lifecycle: 'deleted' };
  }
}

export const vmDecider: Decider<VmCommand, VmState, VmEvent> = { initialState, decide, evolve };
