/** A function proxy-addr calls per hop of X-Forwarded-For (`hop` 0 is the socket's peer). */
export type ProxyTrustFunction = (address: string, hop: number) => boolean;

/**
 * ARBOR_TRUST_PROXY as Fastify takes it. A hop count keeps the meaning it had on Express (the
 * client is that many proxies back, whoever the peer is), which Fastify no longer gives a bare
 * number (it trusts no hop); the other forms (true, false, addresses, subnets, names such as
 * `loopback`) go to proxy-addr as they did.
 */
export function proxyTrust(trust: boolean | number | string): boolean | string | ProxyTrustFunction {
  if (typeof trust !== 'number') return trust;
  return (_address, hop) => hop < trust;
}
