import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a tenant's URL must not make Arbor call: loopback, the private and shared ranges,
 * link-local (cloud metadata services live there), multicast and the reserved blocks — the host
 * itself, its neighbours and whatever listens on them (the api, the stores, the VMs' networks).
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127], // :: and ::1
  ['64:ff9b::', 96], // NAT64 of any IPv4 address
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IP address) is one Arbor must not call for a tenant. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? PRIVATE.check(mapped[1], 'ipv4') : PRIVATE.check(address, 'ipv6');
}

/**
 * Why a URL's host is private without resolving it (an IP literal in a private range, `localhost`
 * and its subdomains), else null. Names that resolve to private addresses are caught when the
 * connection resolves them.
 */
export function privateHostOf(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is the host itself`;
  return isPrivateAddress(host) ? `${host} is a private address` : null;
}

/** The code of the lookup error that refused a destination (publicOnlyLookup). */
export const PRIVATE_ONLY = 'EARBORPRIVATE';

/**
 * `resolve` (dns.lookup) without the private addresses, for a connection's own `lookup`: the check
 * is on the addresses the connection itself connects to, so a name cannot resolve to a public
 * address when checked and a private one when connected (DNS rebinding). When only private ones
 * are left it fails with PRIVATE_ONLY and an error naming them and `hint` (how an operator allows
 * them). Names in `allowedNames` (lower case) resolve as they are: those an operator listed.
 */
export function publicOnlyLookup(hint: string, options: { resolve?: typeof dnsLookup; allowedNames?: ReadonlySet<string> } = {}): LookupFunction {
  const resolve = options.resolve ?? dnsLookup;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...(lookupOptions as LookupAllOptions), all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = options.allowedNames?.has(hostname.toLowerCase()) ? addresses : addresses.filter((entry) => !isPrivateAddress(entry.address));
      if (usable.length === 0) {
        const listed = addresses.map((entry) => entry.address).join(', ');
        return callback(Object.assign(new Error(`refused: ${hostname} resolves only to private addresses (${listed}; ${hint})`), { code: PRIVATE_ONLY }), '', 0);
      }
      if ((lookupOptions as LookupAllOptions).all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0].address, usable[0].family);
    });
  };
}
