import type { lookup } from 'node:dns';
import { isPrivateAddress, PRIVATE_ONLY, privateHostOf, publicOnlyLookup } from './private-addresses';

describe('private addresses: what a tenant URL must not make Arbor call', () => {
  it.each(['127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1'])(
    '%s is private',
    (address) => expect(isPrivateAddress(address)).toBe(true),
  );

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:2800:220:1::1', '::ffff:8.8.8.8'])('%s is public', (address) => expect(isPrivateAddress(address)).toBe(false));

  it('names a URL host that is private without resolving it, and leaves names to the connection', () => {
    expect(privateHostOf(new URL('http://LOCALHOST:80/'))).toBe('localhost is the host itself');
    expect(privateHostOf(new URL('http://api.localhost/'))).toBe('api.localhost is the host itself');
    expect(privateHostOf(new URL('http://[fe80::1]/'))).toBe('fe80::1 is a private address');
    expect(privateHostOf(new URL('https://hooks.example.com/'))).toBeNull();
    expect(privateHostOf(new URL('https://8.8.8.8/'))).toBeNull();
  });

  it('connects only to the public addresses a name resolves to, refuses a name with none, and lets through the names an operator listed', async () => {
    const resolver = (addresses: string[]) =>
      ((_host: string, _options: unknown, callback: (error: null, addresses: { address: string; family: number }[]) => void) =>
        callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))) as unknown as typeof lookup;
    const pick = (addresses: string[], all: boolean, host = 'hooks.example', allowedNames?: Set<string>) =>
      new Promise<unknown>((resolve) =>
        publicOnlyLookup('the hint', { resolve: resolver(addresses), allowedNames })(host, { all }, (error: (Error & { code?: string }) | null, address: unknown) => resolve(error ? `${error.code}: ${error.message}` : address)),
      );
    expect(await pick(['127.0.0.1', '93.184.216.34'], false)).toBe('93.184.216.34');
    expect(await pick(['fd00::1', '2606:2800:220:1::1', '10.0.0.1'], true)).toEqual([{ address: '2606:2800:220:1::1', family: 6 }]);
    expect(await pick(['127.0.0.1', '::ffff:10.0.0.1', '172.20.0.1'], false)).toBe(`${PRIVATE_ONLY}: refused: hooks.example resolves only to private addresses (127.0.0.1, ::ffff:10.0.0.1, 172.20.0.1; the hint)`);
    expect(await pick(['10.0.0.5'], false, 'Registry.Internal', new Set(['registry.internal']))).toBe('10.0.0.5');
    expect(await pick(['10.0.0.5'], false, 'other.internal', new Set(['registry.internal']))).toMatch(/^EARBORPRIVATE: refused: other.internal/);
  });
});
