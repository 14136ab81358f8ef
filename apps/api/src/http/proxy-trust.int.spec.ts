import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { proxyTrust } from './proxy-trust';

/** The client address a real Fastify server reports under a form of ARBOR_TRUST_PROXY, asked over loopback (the peer is 127.0.0.1). */
async function clientAddress(trust: boolean | number | string, forwardedFor: string): Promise<string> {
  const app = Fastify({ trustProxy: proxyTrust(trust) });
  app.get('/', async (request) => request.ip);
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const { port } = app.server.address() as AddressInfo;
    return await (await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-forwarded-for': forwardedFor } })).text();
  } finally {
    await app.close();
  }
}

describe('proxyTrust (ARBOR_TRUST_PROXY)', () => {
  const chain = '203.0.113.7, 198.51.100.2';

  it('a hop count trusts that many proxies, counted from the peer', async () => {
    expect(await clientAddress(1, chain)).toBe('198.51.100.2');
    expect(await clientAddress(2, chain)).toBe('203.0.113.7');
  });

  it('unset (false) takes the socket peer; true takes the far end of the chain', async () => {
    expect(await clientAddress(false, chain)).toBe('127.0.0.1');
    expect(await clientAddress(true, chain)).toBe('203.0.113.7');
  });

  it('named proxies are trusted only as far as the chain goes through them', async () => {
    expect(await clientAddress('loopback', chain)).toBe('198.51.100.2');
    expect(await clientAddress('loopback, 198.51.100.0/24', chain)).toBe('203.0.113.7');
    expect(await clientAddress('10.0.0.0/8', chain)).toBe('127.0.0.1');
  });
});
