/** The machine a VM asked for (VmCreateVmConfig, with the contract's defaults applied). */
export interface VmConfig {
  vcpu_count: number;
  mem_size_mib: number;
  fs_size_mib: number;
  image_name: string;
  kernel_name: string;
}

export const VM_CONFIG_DEFAULTS: VmConfig = {
  vcpu_count: 1,
  mem_size_mib: 512,
  fs_size_mib: 1024,
  image_name: 'default',
  kernel_name: 'default.bin',
};

export type Labels = Record<string, string>;
