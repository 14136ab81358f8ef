/** What one org may hold at once, summed over its VMs and commits. */
export interface OrgQuotas {
  /** VMs that exist (booting, running, paused or dead: every VM not yet deleted). */
  vms: number;
  vcpus: number;
  memory_mib: number;
  /** The sum of the VMs' fs_size_mib (disks are sparse, so this is what they may grow to). */
  disk_mib: number;
  /** What the org's commits hold on the hosts' disks (see CommitStorageMeasured). */
  commit_bytes: number;
}

/** The most one VM may ask for. */
export interface VmMaxima {
  vcpu_count: number;
  mem_size_mib: number;
  fs_size_mib: number;
}

/** Every resource limit the control plane enforces, from configuration (ARBOR_QUOTA_*, ARBOR_VM_MAX_*). */
export interface ResourceLimits {
  org: OrgQuotas;
  vm: VmMaxima;
  /** The most VMs one branch request (`count`) may make. */
  branch_count: number;
}

/** A VM's share of its org's quotas: the machine it asked for. */
export interface VmShare {
  vm_id: string;
  vcpu_count: number;
  mem_size_mib: number;
  fs_size_mib: number;
}

/** A VM's share: the shape fields of its config, nothing else. */
export const vmShareOf = (vm_id: string, config: Omit<VmShare, 'vm_id'>): VmShare => ({
  vm_id,
  vcpu_count: config.vcpu_count,
  mem_size_mib: config.mem_size_mib,
  fs_size_mib: config.fs_size_mib,
});
