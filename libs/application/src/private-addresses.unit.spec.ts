import { isPrivateAddress, privateHostOf } from './private-addresses';

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
});
