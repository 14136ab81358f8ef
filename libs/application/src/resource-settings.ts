import type { ResourceLimits } from '@arbor/domain';
import { positiveSetting, wholeSetting } from './settings';

/** Every bound on what tenants may take, from the environment (README: Configuration). */
export interface ResourceSettings {
  /** Per-org quotas, per-VM maxima and the branch count limit (ARBOR_QUOTA_*, ARBOR_VM_MAX_*, ARBOR_BRANCH_MAX_COUNT). */
  limits: ResourceLimits;
  /** The most output one exec records; past it the command is stopped (ARBOR_EXEC_OUTPUT_MAX_BYTES, default 32 MiB). */
  execOutputMaxBytes: number;
  /** New VMs, branches and commits are refused while the data disk has less free space than this (ARBOR_DATA_DISK_FLOOR_MIB, default 2 GiB). */
  dataDiskFloorMib: number;
}

const MIB = 1024 * 1024;

/**
 * Defaults a single host lives with: an org may hold 20 VMs, 32 vCPUs, 32 GiB of memory, 256 GiB
 * of (sparse) disk and 100 GiB of commits; one VM at most 8 vCPUs, 16 GiB of memory and a 64 GiB
 * disk; one branch request at most 32 VMs.
 */
export function loadResourceSettings(env: NodeJS.ProcessEnv = process.env): ResourceSettings {
  return {
    limits: {
      org: {
        vms: positiveSetting(env, 'ARBOR_QUOTA_VMS', 20),
        vcpus: positiveSetting(env, 'ARBOR_QUOTA_VCPUS', 32),
        memory_mib: positiveSetting(env, 'ARBOR_QUOTA_MEMORY_MIB', 32 * 1024),
        disk_mib: positiveSetting(env, 'ARBOR_QUOTA_DISK_MIB', 256 * 1024),
        commit_bytes: positiveSetting(env, 'ARBOR_QUOTA_COMMIT_MIB', 100 * 1024) * MIB,
      },
      vm: {
        vcpu_count: positiveSetting(env, 'ARBOR_VM_MAX_VCPUS', 8),
        mem_size_mib: positiveSetting(env, 'ARBOR_VM_MAX_MEMORY_MIB', 16 * 1024),
        fs_size_mib: positiveSetting(env, 'ARBOR_VM_MAX_DISK_MIB', 64 * 1024),
      },
      branch_count: positiveSetting(env, 'ARBOR_BRANCH_MAX_COUNT', 32),
    },
    execOutputMaxBytes: positiveSetting(env, 'ARBOR_EXEC_OUTPUT_MAX_BYTES', 32 * MIB),
    dataDiskFloorMib: wholeSetting(env, 'ARBOR_DATA_DISK_FLOOR_MIB', 2048),
  };
}
