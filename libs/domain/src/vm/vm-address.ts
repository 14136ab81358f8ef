import { createHash } from 'node:crypto';

/**
 * A VM's IPv6 address as the contract reports it: a per-org ULA prefix (fdXX:XXXX:XXXX::/48) and a
 * per-VM interface id, both derived, so whoever asks for a VM (the api, a saga) gives it the same.
 */
export function vmAddress(org_id: string, vm_id: string): string {
  const org = createHash('sha256').update(org_id).digest('hex');
  const vm = vm_id.replace(/-/g, '');
  const groups = [`fd${org.slice(0, 2)}`, org.slice(2, 6), org.slice(6, 10), '0', vm.slice(16, 20), vm.slice(20, 24), vm.slice(24, 28), vm.slice(28, 32)];
  return groups.map((g) => g.replace(/^0+(?=.)/, '')).join(':');
}
