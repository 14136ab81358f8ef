import { lookup } from 'node:dns/promises';
import { isPrivateAddress, privateHostOf } from '@arbor/application';

/**
 * The check the registry client runs before each request (the registry, its token service, a
 * blob's redirect): a tenant names the registry, so the worker must not become a way into the
 * host's own network. A destination on a private address (loopback, the private ranges,
 * link-local) is refused unless the operator listed it (ARBOR_REGISTRY_INSECURE or
 * ARBOR_REGISTRY_PRIVATE, as host:port). Names are resolved here; a name that resolves
 * differently a moment later (DNS rebinding) is not caught.
 */
export function registryUrlCheck(allowedPrivate: readonly string[]): (url: URL) => Promise<void> {
  const allowed = new Set(allowedPrivate.map((host) => host.toLowerCase()));
  return async (url) => {
    const host = url.host.toLowerCase();
    if (allowed.has(host)) return;
    const literal = privateHostOf(url);
    if (literal) throw new Error(`${host}: ${literal}; a registry there must be listed in ARBOR_REGISTRY_PRIVATE (or ARBOR_REGISTRY_INSECURE)`);
    const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = await lookup(name, { all: true }).catch((error: Error) => {
      throw new Error(`${host}: cannot resolve ${name} (${error.message})`);
    });
    const inside = addresses.find(({ address }) => isPrivateAddress(address));
    if (inside) throw new Error(`${host} resolves to the private address ${inside.address}; a registry there must be listed in ARBOR_REGISTRY_PRIVATE`);
  };
}
