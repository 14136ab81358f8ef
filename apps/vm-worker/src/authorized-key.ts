import { GuestFileError, type HypervisorDriver } from '@arbor/hypervisor';

const AUTHORIZED_KEYS = '/root/.ssh/authorized_keys';
/** More than any authorized_keys a person keeps; a guest's bigger file is refused rather than read. */
const MAX_AUTHORIZED_KEYS_BYTES = 1024 * 1024;

/**
 * Re-keys a guest: root's authorized_keys gets `publicKey` in place of the VM's previous own key
 * (the lines ending with its comment, `arbor-vm-<id>`); keys the guest's users added stay. The file
 * is the guest's, so what it holds is taken as it is, bounded.
 */
export async function replaceAuthorizedKey(driver: HypervisorDriver, vm_id: string, publicKey: string): Promise<void> {
  const current = await driver.readFile(vm_id, AUTHORIZED_KEYS, { max_bytes: MAX_AUTHORIZED_KEYS_BYTES }).catch((error) => {
    if (error instanceof GuestFileError && error.reason === 'not_found') return Buffer.alloc(0);
    throw error;
  });
  const own = ` arbor-vm-${vm_id}`;
  const kept = current
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimEnd().endsWith(own));
  await driver.writeFile(vm_id, AUTHORIZED_KEYS, Buffer.from([...kept, publicKey.trim(), ''].join('\n')), { mode: 0o600, create_dirs: true });
}
