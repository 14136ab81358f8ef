import type { Labels, VmConfig } from '@arbor/domain';

/** Collection `vms`: one document per VM, kept by the projector, served by list/get. */
export const VMS_COLLECTION = 'vms';

export type VmReadState = 'booting' | 'running' | 'paused' | 'dead';

export interface VmDocument {
  _id: string;
  vm_id: string;
  org_id: string;
  owner_id: string;
  created_at: string;
  state: VmReadState;
  labels: Labels | null;
  /**
   * Its IPv6 address (the contract's `ip`): the machine's own once it is on its host's network
   * (VmNetworkAttached); until then the address the control plane derived at creation.
   */
  ip: string;
  /** Its IPv4 address (egress, NATed), once it is on its host's network; absent in older documents. */
  ipv4?: string | null;
  config: VmConfig;
  parent_commit_id: string | null;
  grandparent_vm_id: string | null;
  /** The SSH key generation the VM's key pair derives from (absent in documents projected before generations: 1). */
  ssh_key_generation?: number | null;
  /** Set when deletion was requested; the VM leaves the lists once `deleted_at` is set. */
  deleting: boolean;
  deleted_at: string | null;
  /** Why the VM is dead, when it is. */
  failure_reason: string | null;
  [field: string]: unknown;
}
