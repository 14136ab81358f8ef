import { deciderSpec } from '../testing/decider-spec';
import { orgUsageDecider } from './org-usage.decider';
import type { OrgUsageEvent } from './org-usage.events';
import { QuotaExceededError } from './quota-exceeded';
import type { ResourceLimits, VmShare } from './resource-limits';

const org_id = 'org-1';
const now = '2026-11-25T10:00:00.000Z';
const spec = deciderSpec(orgUsageDecider);
const limits: ResourceLimits = {
  org: { vms: 3, vcpus: 4, memory_mib: 2048, disk_mib: 4096, commit_bytes: 1000 },
  vm: { vcpu_count: 2, mem_size_mib: 1024, fs_size_mib: 2048 },
  branch_count: 8,
};
const vm = (n: number, share: Partial<VmShare> = {}): VmShare => ({ vm_id: `vm-${n}`, vcpu_count: 1, mem_size_mib: 512, fs_size_mib: 1024, ...share });
const opened = (vms: VmShare[] = []): OrgUsageEvent => ({ type: 'OrgUsageOpened', data: { org_id, vms, opened_at: now } });
const reserved = (share: VmShare): OrgUsageEvent => ({ type: 'VmResourcesReserved', data: { org_id, ...share, reserved_at: now } });
const released = (vm_id: string): OrgUsageEvent => ({ type: 'VmResourcesReleased', data: { org_id, vm_id, released_at: now } });
const reserve = (vms: VmShare[], existing: VmShare[] = []) => ({ type: 'ReserveVmResources' as const, org_id, vms, limits, existing, now });
const commitReserved = (commit_id: string, bytes: number): OrgUsageEvent => ({ type: 'CommitStorageReserved', data: { org_id, commit_id, bytes, reserved_at: now } });
const commitMeasured = (commit_id: string, bytes: number): OrgUsageEvent => ({ type: 'CommitStorageMeasured', data: { org_id, commit_id, bytes, measured_at: now } });

describe('org usage: quotas decided on one stream per org', () => {
  it('opens the usage with the VMs the org already had, then reserves the new one', () =>
    spec.given([]).when(reserve([vm(1)], [vm(9)])).then([opened([vm(9)]), reserved(vm(1))]));

  it('reserves several VMs at once (a branch) and refuses the whole batch when one does not fit', () => {
    spec.given([opened()]).when(reserve([vm(1), vm(2)])).then([reserved(vm(1)), reserved(vm(2))]);
    spec.given([opened(), reserved(vm(1))]).when(reserve([vm(2), vm(3), vm(4)])).thenThrows('forbidden', 'org quota exceeded: vms limit is 3 VM(s), 1 VM(s) in use, 3 VM(s) more asked');
  });

  it('names the quota, its limit, the use and the ask, for each dimension', () => {
    const given = [opened(), reserved(vm(1, { vcpu_count: 2, mem_size_mib: 1024, fs_size_mib: 2048 }))];
    spec.given(given).when(reserve([vm(2, { vcpu_count: 2, mem_size_mib: 1024, fs_size_mib: 2048 }), vm(3)])).thenThrows('forbidden', /^org quota exceeded: vcpus limit is 4 vCPU\(s\), 2 vCPU\(s\) in use, 3 vCPU\(s\) more asked$/);
    spec.given(given).when(reserve([vm(2, { vcpu_count: 1, mem_size_mib: 1024 }), vm(3, { mem_size_mib: 512 })])).thenThrows('forbidden', /memory_mib limit is 2048 MiB, 1024 MiB in use, 1536 MiB more asked/);
    spec.given(given).when(reserve([vm(2, { fs_size_mib: 2048 }), vm(3, { fs_size_mib: 1 })])).thenThrows('forbidden', /disk_mib limit is 4096 MiB, 2048 MiB in use, 2049 MiB more asked/);
    let thrown: unknown;
    try {
      orgUsageDecider.decide(reserve([vm(2, { vcpu_count: 2 }), vm(3)]), [...given].reduce(orgUsageDecider.evolve, orgUsageDecider.initialState()));
    } catch (error) {
      thrown = error;
    }
    expect((thrown as QuotaExceededError).quota).toEqual({ name: 'vcpus', limit: 4, used: 2, requested: 3 });
  });

  it('refuses a VM larger than any VM may be, naming the field', () => {
    spec.given([opened()]).when(reserve([vm(1, { vcpu_count: 64 })])).thenThrows('forbidden', 'per-VM limit exceeded: vcpu_count may be at most 2, 64 asked');
    spec.given([opened()]).when(reserve([vm(1, { mem_size_mib: 262144 })])).thenThrows('forbidden', /mem_size_mib may be at most 1024, 262144 asked/);
    spec.given([opened()]).when(reserve([vm(1, { fs_size_mib: 2049 })])).thenThrows('forbidden', /fs_size_mib may be at most 2048/);
  });

  it('a deleted VM releases its share: the slot is free again', () => {
    const full = [opened(), reserved(vm(1)), reserved(vm(2)), reserved(vm(3))];
    spec.given(full).when(reserve([vm(4)])).thenThrows('forbidden', /vms limit is 3/);
    spec.given(full).when({ type: 'ReleaseVmResources', org_id, vm_id: 'vm-2', now }).then([released('vm-2')]);
    spec.given([...full, released('vm-2')]).when(reserve([vm(4)])).then([reserved(vm(4))]);
  });

  it('is idempotent: a reservation held already, or a release of a VM not held, appends nothing', () => {
    spec.given([opened(), reserved(vm(1))]).when(reserve([vm(1)])).then([]);
    spec.given([opened()]).when({ type: 'ReleaseVmResources', org_id, vm_id: 'vm-1', now }).then([]);
  });

  it('a resize reserves the VM again with its new size; only growth is checked, a shrink back always passes', () => {
    const given = [opened(), reserved(vm(1, { fs_size_mib: 2048 })), reserved(vm(2, { fs_size_mib: 1500 })), reserved(vm(3, { fs_size_mib: 548 }))];
    spec.given(given).when(reserve([vm(3, { fs_size_mib: 549 })])).thenThrows('forbidden', /disk_mib limit is 4096 MiB, 4096 MiB in use, 1 MiB more asked/);
    spec.given([opened(), reserved(vm(1, { fs_size_mib: 1024 }))]).when(reserve([vm(1, { fs_size_mib: 2048 })])).then([reserved(vm(1, { fs_size_mib: 2048 }))]);
    // An org over its quota (limits lowered since) may still shrink back.
    const over = [opened(), reserved(vm(1, { fs_size_mib: 2048 })), reserved(vm(2, { fs_size_mib: 2048 })), reserved(vm(3, { fs_size_mib: 2048 }))];
    spec.given(over).when(reserve([vm(3, { fs_size_mib: 1024 })])).then([reserved(vm(3, { fs_size_mib: 1024 }))]);
  });

  it("reserves a commit's most, records what it took, and releases it; the reservation counts meanwhile", () => {
    spec.given([]).when({ type: 'ReserveCommitStorage', org_id, commit_id: 'c1', bytes: 600, limits, now }).then([commitReserved('c1', 600)]);
    spec.given([commitReserved('c1', 600)]).when({ type: 'ReserveCommitStorage', org_id, commit_id: 'c2', bytes: 600, limits, now }).thenThrows('forbidden', 'org quota exceeded: commit_bytes limit is 1000 bytes, 600 bytes in use, 600 bytes more asked');
    spec.given([commitReserved('c1', 600)]).when({ type: 'MeasureCommitStorage', org_id, commit_id: 'c1', bytes: 100, now }).then([commitMeasured('c1', 100)]);
    spec.given([commitReserved('c1', 600), commitMeasured('c1', 100)]).when({ type: 'ReserveCommitStorage', org_id, commit_id: 'c2', bytes: 600, limits, now }).then([commitReserved('c2', 600)]);
    spec.given([commitMeasured('c1', 100)]).when({ type: 'MeasureCommitStorage', org_id, commit_id: 'c1', bytes: 100, now }).then([]);
    spec.given([commitMeasured('c1', 100)]).when({ type: 'ReleaseCommitStorage', org_id, commit_id: 'c1', now }).then([{ type: 'CommitStorageReleased', data: { org_id, commit_id: 'c1', released_at: now } }]);
    spec.given([]).when({ type: 'ReleaseCommitStorage', org_id, commit_id: 'c1', now }).then([]);
  });
});
