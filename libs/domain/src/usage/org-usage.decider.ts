import type { Decider } from '../shared/decider';
import type { OrgUsageCommand } from './org-usage.commands';
import type { OrgUsageEvent } from './org-usage.events';
import { orgQuotaExceeded, vmMaximumExceeded, type QuotaExceededError } from './quota-exceeded';
import type { OrgQuotas, VmShare } from './resource-limits';

type Share = Omit<VmShare, 'vm_id'>;

export interface OrgUsageState {
  /** The usage was opened (seeded with the VMs the org had before usage was recorded). */
  opened: boolean;
  /** Every VM of the org not yet released, with its share and when it was reserved. */
  vms: Record<string, Share & { since: string }>;
  /** Every commit not yet released: reserved (the most it can take) or measured. */
  commits: Record<string, { bytes: number; measured: boolean; since: string }>;
}

/** What an org holds, summed. */
export interface OrgUsageTotals {
  vms: number;
  vcpus: number;
  memory_mib: number;
  disk_mib: number;
  commit_bytes: number;
}

const initialState = (): OrgUsageState => ({ opened: false, vms: {}, commits: {} });

export function usageTotals(vms: Iterable<Share>, commitBytes = 0): OrgUsageTotals {
  const totals: OrgUsageTotals = { vms: 0, vcpus: 0, memory_mib: 0, disk_mib: 0, commit_bytes: commitBytes };
  for (const share of vms) {
    totals.vms += 1;
    totals.vcpus += share.vcpu_count;
    totals.memory_mib += share.mem_size_mib;
    totals.disk_mib += share.fs_size_mib;
  }
  return totals;
}

const commitBytesOf = (state: OrgUsageState) => Object.values(state.commits).reduce((sum, commit) => sum + commit.bytes, 0);
const sameShare = (held: Share | undefined, share: Share) =>
  held !== undefined && held.vcpu_count === share.vcpu_count && held.mem_size_mib === share.mem_size_mib && held.fs_size_mib === share.fs_size_mib;
const shrinks = (held: Share | undefined, share: Share) =>
  held !== undefined && share.vcpu_count <= held.vcpu_count && share.mem_size_mib <= held.mem_size_mib && share.fs_size_mib <= held.fs_size_mib;

/**
 * The first quota a change passes: only a dimension the change grows is checked, so an org over a
 * quota (lowered since, or seeded above it) can still delete, shrink back or grow another dimension.
 */
function firstExceeded(before: OrgUsageTotals, after: OrgUsageTotals, quotas: OrgQuotas): QuotaExceededError | null {
  const dimensions = [
    ['vms', 'vms'],
    ['vcpus', 'vcpus'],
    ['memory_mib', 'memory_mib'],
    ['disk_mib', 'disk_mib'],
    ['commit_bytes', 'commit_bytes'],
  ] as const;
  for (const [name, quota] of dimensions) {
    if (after[name] > before[name] && after[name] > quotas[quota]) return orgQuotaExceeded(name, quotas[quota], before[name], after[name] - before[name]);
  }
  return null;
}

function decide(command: OrgUsageCommand, state: OrgUsageState): OrgUsageEvent[] {
  const { org_id, now } = command;
  switch (command.type) {
    case 'ReserveVmResources': {
      const asked = new Set(command.vms.map((vm) => vm.vm_id));
      const changed = command.vms.filter((vm) => !sameShare(state.vms[vm.vm_id], vm));
      const growing = changed.filter((vm) => !shrinks(state.vms[vm.vm_id], vm));
      for (const vm of growing) {
        const maxima = command.limits.vm;
        for (const field of ['vcpu_count', 'mem_size_mib', 'fs_size_mib'] as const) {
          if (vm[field] > maxima[field]) throw vmMaximumExceeded(field, maxima[field], vm[field]);
        }
      }
      const seed = state.opened ? [] : command.existing.filter((vm) => !asked.has(vm.vm_id) && !state.vms[vm.vm_id]);
      const held = new Map<string, Share>([...Object.entries(state.vms), ...seed.map((vm) => [vm.vm_id, vm] as const)]);
      const before = usageTotals(held.values(), commitBytesOf(state));
      for (const vm of changed) held.set(vm.vm_id, vm);
      const exceeded = growing.length ? firstExceeded(before, usageTotals(held.values(), before.commit_bytes), command.limits.org) : null;
      if (exceeded) throw exceeded;
      const opening: OrgUsageEvent[] = state.opened ? [] : [{ type: 'OrgUsageOpened', data: { org_id, vms: seed, opened_at: now } }];
      if (!changed.length) return opening.length && seed.length ? opening : [];
      return [
        ...opening,
        ...changed.map((vm): OrgUsageEvent => ({
          type: 'VmResourcesReserved',
          data: { org_id, vm_id: vm.vm_id, vcpu_count: vm.vcpu_count, mem_size_mib: vm.mem_size_mib, fs_size_mib: vm.fs_size_mib, reserved_at: now },
        })),
      ];
    }
    case 'ReleaseVmResources':
      if (!state.vms[command.vm_id]) return [];
      return [{ type: 'VmResourcesReleased', data: { org_id, vm_id: command.vm_id, released_at: now } }];
    case 'ReserveCommitStorage': {
      if (state.commits[command.commit_id]) return [];
      const held = commitBytesOf(state);
      if (held + command.bytes > command.limits.org.commit_bytes) throw orgQuotaExceeded('commit_bytes', command.limits.org.commit_bytes, held, command.bytes);
      return [{ type: 'CommitStorageReserved', data: { org_id, commit_id: command.commit_id, bytes: command.bytes, reserved_at: now } }];
    }
    case 'MeasureCommitStorage': {
      const held = state.commits[command.commit_id];
      if (held?.measured && held.bytes === command.bytes) return [];
      return [{ type: 'CommitStorageMeasured', data: { org_id, commit_id: command.commit_id, bytes: command.bytes, measured_at: now } }];
    }
    case 'ReleaseCommitStorage':
      if (!state.commits[command.commit_id]) return [];
      return [{ type: 'CommitStorageReleased', data: { org_id, commit_id: command.commit_id, released_at: now } }];
  }
}

function evolve(state: OrgUsageState, event: OrgUsageEvent): OrgUsageState {
  switch (event.type) {
    case 'OrgUsageOpened': {
      const vms = { ...state.vms };
      for (const { vm_id, ...share } of event.data.vms) vms[vm_id] = { ...share, since: event.data.opened_at };
      return { ...state, opened: true, vms };
    }
    case 'VmResourcesReserved': {
      const { vm_id, vcpu_count, mem_size_mib, fs_size_mib, reserved_at } = event.data;
      return { ...state, vms: { ...state.vms, [vm_id]: { vcpu_count, mem_size_mib, fs_size_mib, since: state.vms[vm_id]?.since ?? reserved_at } } };
    }
    case 'VmResourcesReleased': {
      const { [event.data.vm_id]: _released, ...vms } = state.vms;
      return { ...state, vms };
    }
    case 'CommitStorageReserved':
      return { ...state, commits: { ...state.commits, [event.data.commit_id]: { bytes: event.data.bytes, measured: false, since: event.data.reserved_at } } };
    case 'CommitStorageMeasured': {
      const since = state.commits[event.data.commit_id]?.since ?? event.data.measured_at;
      return { ...state, commits: { ...state.commits, [event.data.commit_id]: { bytes: event.data.bytes, measured: true, since } } };
    }
    case 'CommitStorageReleased': {
      const { [event.data.commit_id]: _released, ...commits } = state.commits;
      return { ...state, commits };
    }
  }
}

export const orgUsageDecider: Decider<OrgUsageCommand, OrgUsageState, OrgUsageEvent> = { initialState, decide, evolve };

/** What the org holds now. */
export function totalsOf(state: OrgUsageState): OrgUsageTotals {
  return usageTotals(Object.values(state.vms), commitBytesOf(state));
}
