import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseImageReference, RegistryClient } from '@arbor/image-sources';
import { registryGuards } from './registry-guards';

/**
 * The registry client's guards against a tenant's registry on the host's own network, with a
 * stand-in registry on loopback (every request recorded, every answer a 404) and the machine's
 * real resolver (`localhost` resolves to loopback).
 */
describe('registry guards: a tenant-named registry cannot reach the host', () => {
  let server: Server;
  let port: number;
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
    });
    // Both loopbacks where the host has IPv6 (`localhost` may resolve to either), else IPv4's.
    const listen = (host: string) => new Promise<void>((resolve, reject) => server.once('error', reject).listen({ port: 0, host, ipv6Only: false }, () => resolve()));
    await listen('::').catch(() => listen('127.0.0.1'));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => requests.splice(0));

  const pull = async (client: RegistryClient) => {
    try {
      return await client.resolveManifest(parseImageReference(`localhost:${port}/app:latest`)).then(() => 'pulled', (error: Error) => error.message);
    } finally {
      await client.close();
    }
  };

  it('refuses a private destination before the request, with what an operator can do about it', async () => {
    const { checkUrl } = registryGuards([]);
    await expect(checkUrl(new URL(`http://localhost:${port}/v2/`))).rejects.toThrow(`localhost:${port}: localhost is the host itself; a registry there must be listed in ARBOR_REGISTRY_PRIVATE (or ARBOR_REGISTRY_INSECURE)`);
    await expect(checkUrl(new URL('http://169.254.169.254/latest/'))).rejects.toThrow('169.254.169.254 is a private address');
    await expect(registryGuards([`localhost:${port}`]).checkUrl(new URL(`http://localhost:${port}/v2/`))).resolves.toBeUndefined();
  });

  it('drops private addresses where the connection resolves its name: a name that passed the check cannot then reach the host (DNS rebinding)', async () => {
    // The check is left out, as if the name had resolved to a public address when it ran.
    const rebound = await pull(new RegistryClient({ insecureRegistries: [`localhost:${port}`], lookup: registryGuards([]).lookup }));
    expect(rebound).toMatch(/refused: localhost resolves only to private addresses \((127\.0\.0\.1|::1).*a registry there must be listed in ARBOR_REGISTRY_PRIVATE\)/);
    expect(requests).toEqual([]);

    const listed = await pull(new RegistryClient({ insecureRegistries: [`localhost:${port}`], ...registryGuards([`localhost:${port}`]) }));
    expect(listed).not.toMatch(/refused/);
    expect(requests).toEqual(['/v2/app/manifests/latest']);
  });
});
