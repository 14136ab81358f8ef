import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { BRIDGE_NAME, type NetworkSettings } from './network-settings';

/** The host's link-local address on the bridge: every machine's IPv6 default gateway. */
export const GATEWAY_LINK_LOCAL = 'fe80::1';

/**
 * Which addresses exist on a bridge: the host's (gateway) addresses and how a machine's are made.
 * IPv4 addresses are handed out by index (lowest free, see NetworkLeases); a machine's IPv6
 * interface id comes from a hash of its VM id, so it is spread over the /64 and not reused by the
 * next machine; its MAC from its IPv4 address (unique on the bridge, like Docker's), and its
 * link-local address from the MAC (EUI-64), so each port admits exactly one of each.
 */
export class AddressPlan {
  readonly bridge: string;
  /** e.g. 10.213.0.0 and 16. */
  readonly ipv4Network: ipaddr.IPv4;
  readonly ipv4PrefixLength: number;
  /** The /64, e.g. fd12:3456:789a::. */
  readonly ipv6Network: ipaddr.IPv6;
  /** The host's addresses on the bridge. */
  readonly gateway4: string;
  readonly gateway6: string;
  /** The bridge's own MAC: fixed, or the bridge would take its lowest port's, changing as machines come and go. */
  readonly bridgeMac: string;

  constructor(settings: NetworkSettings, hostMachineId: string) {
    if (!BRIDGE_NAME.test(settings.bridge)) {
      throw new Error(`ARBOR_VM_BRIDGE must be an interface name of letters, digits, - and _ (at most 15), not ${JSON.stringify(settings.bridge)}`);
    }
    this.bridge = settings.bridge;
    [this.ipv4Network, this.ipv4PrefixLength] = parseIpv4Subnet(settings.ipv4Subnet);
    this.ipv6Network = settings.ipv6Prefix === null ? uniqueLocalPrefix(hostMachineId, settings.bridge) : parseIpv6Prefix(settings.ipv6Prefix);
    this.gateway4 = this.ipv4At(1);
    this.gateway6 = this.ipv6With([0, 0, 0, 1]);
    this.bridgeMac = macOf([0x02, 0xa7, ...createHash('sha256').update(`${hostMachineId}/${settings.bridge}`).digest().subarray(0, 4)]);
  }

  get ipv4Subnet(): string {
    return `${this.ipv4Network.toString()}/${this.ipv4PrefixLength}`;
  }

  get ipv6Prefix(): string {
    return `${this.ipv6Network.toString()}/64`;
  }

  /** Indexes a machine may take: past the network address and the gateway, before the broadcast address. */
  get machineIndexes(): { first: number; last: number } {
    return { first: 2, last: 2 ** (32 - this.ipv4PrefixLength) - 2 };
  }

  ipv4At(index: number): string {
    const base = this.ipv4Network.octets.reduce((sum, octet) => sum * 256 + octet, 0);
    const value = base + index;
    return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
  }

  indexOf(ipv4: string): number {
    const value = (address: ipaddr.IPv4) => address.octets.reduce((sum, octet) => sum * 256 + octet, 0);
    return value(ipaddr.IPv4.parse(ipv4)) - value(this.ipv4Network);
  }

  /**
   * The machine's IPv6 address: the /64 and an interface id hashed from its VM id (`attempt`
   * counts up past a collision, which needs 2^32 machines to become likely).
   */
  ipv6For(vmId: string, attempt = 0): string {
    const hash = createHash('sha256').update(`${vmId}/${attempt}`).digest();
    const interfaceId = [0, 2, 4, 6].map((at) => hash.readUInt16BE(at));
    // Never the subnet-router anycast address (::) or the gateway (::1).
    if (interfaceId.slice(0, 3).every((part) => part === 0) && interfaceId[3] <= 1) return this.ipv6For(vmId, attempt + 1);
    return this.ipv6With(interfaceId);
  }

  /** A machine's MAC: locally administered, from its IPv4 address, so unique on the bridge. */
  macFor(ipv4: string): string {
    return macOf([0x02, 0xa8, ...ipaddr.IPv4.parse(ipv4).octets]);
  }

  private ipv6With(interfaceId: number[]): string {
    return new ipaddr.IPv6([...this.ipv6Network.parts.slice(0, 4), ...interfaceId]).toString();
  }
}

/** The EUI-64 link-local address of a MAC (what the kernel would make; set explicitly in guests). */
export function linkLocalOf(mac: string): string {
  const bytes = mac.split(':').map((byte) => parseInt(byte, 16));
  const eui = [bytes[0] ^ 0x02, bytes[1], bytes[2], 0xff, 0xfe, bytes[3], bytes[4], bytes[5]];
  const parts = [0xfe80, 0, 0, 0, ...[0, 2, 4, 6].map((at) => eui[at] * 256 + eui[at + 1])];
  return new ipaddr.IPv6(parts).toString();
}

function macOf(bytes: number[]): string {
  return bytes.map((byte) => byte.toString(16).padStart(2, '0')).join(':');
}

function parseIpv4Subnet(cidr: string): [ipaddr.IPv4, number] {
  if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(cidr)) throw new Error(`ARBOR_VM_IPV4_SUBNET must be an IPv4 subnet such as 10.213.0.0/16, not ${JSON.stringify(cidr)}`);
  const [, length] = ipaddr.IPv4.parseCIDR(cidr);
  if (length < 8 || length > 28) throw new Error(`ARBOR_VM_IPV4_SUBNET must be a /8 to /28 (machines need addresses), not /${length}`);
  return [ipaddr.IPv4.networkAddressFromCIDR(cidr), length];
}

function parseIpv6Prefix(cidr: string): ipaddr.IPv6 {
  if (!ipaddr.IPv6.isValidCIDR(cidr) || ipaddr.IPv6.parseCIDR(cidr)[1] !== 64) {
    throw new Error(`ARBOR_VM_IPV6_PREFIX must be an IPv6 /64 such as fd12:3456:789a:1::/64, not ${JSON.stringify(cidr)}`);
  }
  return ipaddr.IPv6.networkAddressFromCIDR(cidr);
}

/**
 * An RFC 4193 unique local /64 for this host: fd + a 40-bit global id and a 16-bit subnet id,
 * hashed from the host's machine id and the bridge, so it is stable across restarts and differs
 * between hosts without being stored anywhere.
 */
function uniqueLocalPrefix(hostMachineId: string, bridge: string): ipaddr.IPv6 {
  const hash = createHash('sha256').update(`arbor-ula/${hostMachineId}/${bridge}`).digest();
  const parts = [0xfd00 + hash[0], hash.readUInt16BE(1), hash.readUInt16BE(3), hash.readUInt16BE(5), 0, 0, 0, 0];
  return new ipaddr.IPv6(parts);
}
