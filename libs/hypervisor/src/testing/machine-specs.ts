import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { MachineSpec, SnapshotMachineSpec } from '../hypervisor-driver.port';

/**
 * A fresh OpenSSH public key line ("ssh-ed25519 <base64> comment"), as the control plane gives
 * every VM: the raw 32-byte key is the tail of the SPKI DER, wrapped in SSH wire format.
 */
export function openSshPublicKey(comment: string): string {
  const der = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  const sshString = (data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    return Buffer.concat([length, data]);
  };
  const wire = Buffer.concat([sshString(Buffer.from('ssh-ed25519')), sshString(der.subarray(der.length - 32))]);
  return `ssh-ed25519 ${wire.toString('base64')} ${comment}`;
}

/** The network group of test machines that say none: they may reach each other. */
export const TEST_NETWORK_GROUP = 'arbor-driver-tests';

/** Identity and env of a new machine; hostnames are short and distinct per machine. */
export function snapshotMachineSpec(overrides: Partial<SnapshotMachineSpec> = {}): SnapshotMachineSpec {
  const vm_id = overrides.vm_id ?? randomUUID();
  return {
    vm_id,
    env: {},
    identity: { hostname: `vm-${vm_id.slice(0, 8)}`, ssh_authorized_key: openSshPublicKey(`arbor-${vm_id}`) },
    network_group: TEST_NETWORK_GROUP,
    ...overrides,
  };
}

export function machineSpec(overrides: Partial<MachineSpec> = {}): MachineSpec {
  return {
    vcpu_count: 1,
    mem_size_mib: 256,
    fs_size_mib: 1024,
    image_name: 'default',
    ...snapshotMachineSpec(overrides),
    ...overrides,
  };
}
