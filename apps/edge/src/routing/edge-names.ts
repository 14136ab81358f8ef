import { UUID_PATTERN } from '@arbor/domain';

/** What a host name asks the edge for: one of the VMs' own names, or a custom domain. */
export type EdgeName = { kind: 'vm'; vm_id: string } | { kind: 'domain'; domain: string };

/**
 * `<vm_id>.vm.<edge domain>` names a VM (what the Vers CLI dials); any other host name may be a
 * custom domain. A name under `.vm.<edge domain>` that is not a VM id names nothing.
 */
export function edgeName(host: string, vmSuffix: string): EdgeName | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name.endsWith(vmSuffix)) {
    const vm_id = name.slice(0, -vmSuffix.length);
    return UUID_PATTERN.test(vm_id) ? { kind: 'vm', vm_id } : null;
  }
  return name === vmSuffix.slice(1) ? null : { kind: 'domain', domain: name };
}
