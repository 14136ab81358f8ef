import { GATEWAY_LINK_LOCAL, type AddressPlan } from './address-plan';
import type { NetworkLease } from './network-leases';

/** What a machine's network interface is called inside it (no udev in either guest renames it). */
export const GUEST_INTERFACE = 'eth0';

/**
 * `ip -batch` lines making a tap's host side: a persistent tap device that QEMU opens as its NIC's
 * backend, a port of the bridge. Run only once the port's nft elements exist: a port must never
 * carry a frame unfiltered.
 */
export function tapCreationBatch(lease: NetworkLease, bridge: string): string {
  return [`tuntap add dev ${lease.ifname} mode tap`, `link set dev ${lease.ifname} master ${bridge} up`, ''].join('\n');
}

/**
 * A program run on the host once the process `pid` has its new network namespace (the
 * container's createRuntime hook, before its init runs; the runtime's state, holding the pid, on
 * stdin): a veth pair whose host end is a port of the bridge and whose other end is eth0 in that
 * namespace, configured there with the machine's addresses. Shell builtins parse the state, so
 * it costs two `ip` runs and an nsenter.
 * argv: sh -c <this> arbor-network <port> <bridge> <guestInterfaceBatch>.
 */
export const NAMESPACE_SETUP_SCRIPT = [
  'read -r state || true',
  'pid=${state#*\\"pid\\":}; pid=${pid# }; pid=${pid%%[!0-9]*}',
  '[ -n "$pid" ] || { echo "network setup: no pid in the runtime state" >&2; exit 1; }',
  `printf 'link add %s type veth peer name ${GUEST_INTERFACE} netns %s\\nlink set dev %s master %s up\\n' "$1" "$pid" "$1" "$2" | ip -batch - || exit 1`,
  'printf %s "$3" | exec nsenter --net="/proc/$pid/ns/net" ip -batch -',
].join('\n');

/**
 * `ip -batch` lines giving the machine's eth0 its MAC and addresses: the IPv4 address as a /32
 * and the IPv6 one as a /128, each behind the host's gateway (a route to it on the link, the
 * default route through it), and the link-local address its port admits (EUI-64 of the MAC,
 * set explicitly rather than left to the kernel). Everything goes through the host, which is
 * what lets the host's rules decide. Run again on a machine that already has an address (a qemu
 * guest restored from another machine's memory): the interface is reset first.
 */
export function guestInterfaceBatch(lease: NetworkLease, plan: AddressPlan): string {
  const eth = GUEST_INTERFACE;
  return [
    `link set dev ${eth} down`,
    `link set dev ${eth} address ${lease.mac}`,
    `link set dev ${eth} addrgenmode none`,
    `addr flush dev ${eth}`,
    `link set dev lo up`,
    `link set dev ${eth} up`,
    `addr add ${lease.ipv4}/32 dev ${eth}`,
    `route replace ${plan.gateway4} dev ${eth} scope link`,
    `route replace default via ${plan.gateway4} dev ${eth}`,
    `addr add ${lease.ipv6}/128 dev ${eth} nodad`,
    `addr add ${lease.link_local}/64 dev ${eth} nodad`,
    `route replace default via ${GATEWAY_LINK_LOCAL} dev ${eth}`,
    '',
  ].join('\n');
}
