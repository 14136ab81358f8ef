import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress, privateHostOf, publicOnlyLookup } from '@arbor/application';

const PRIVATE_HINT = 'a registry there must be listed in ARBOR_REGISTRY_PRIVATE';

/** What keeps a pull from a tenant's registry out of the host's own network (RegistryClient's checkUrl and lookup). */
export interface RegistryGuards {
  checkUrl: (url: URL) => Promise<void>;
  lookup: LookupFunction;
}

/**
 * The guards of the registry client (the registry, its token service, a blob's redirect): a tenant
 * names the registry, so the worker must not become a way into the host's own network. A
 * destination on a private address (loopback, the private ranges, link-local) is refused unless
 * the operator listed it (ARBOR_REGISTRY_INSECURE or ARBOR_REGISTRY_PRIVATE, as host:port).
 * `checkUrl` runs before each request and says why in the job's error; `lookup` resolves the
 * names the connections themselves connect to and drops private addresses there, so a name that
 * resolves differently a moment later (DNS rebinding) still cannot reach one.
 */
export function registryGuards(allowedPrivate: readonly string[]): RegistryGuards {
  const allowed = new Set(allowedPrivate.map((host) => host.toLowerCase()));
  const allowedNames = new Set([...allowed].map((host) => new URL(`http://${host}`).hostname.replace(/^\[(.*)\]$/, '$1')));
  const checkUrl = async (url: URL) => {
    const host = url.host.toLowerCase();
    if (allowed.has(host)) return;
    const literal = privateHostOf(url);
    if (literal) throw new Error(`${host}: ${literal}; a registry there must be listed in ARBOR_REGISTRY_PRIVATE (or ARBOR_REGISTRY_INSECURE)`);
    const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = await lookup(name, { all: true }).catch((error: Error) => {
      throw new Error(`${host}: cannot resolve ${name} (${error.message})`);
    });
    const inside = addresses.find(({ address }) => isPrivateAddress(address));
    if (inside) throw new Error(`${host} resolves to the private address ${inside.address}; ${PRIVATE_HINT}`);
  };
  return { checkUrl, lookup: publicOnlyLookup(PRIVATE_HINT, { allowedNames }) };
}
