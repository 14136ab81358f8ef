import { AddressPlan, linkLocalOf } from './address-plan';
import { DEFAULT_NETWORK_SETTINGS } from './network-settings';

describe('AddressPlan: the addresses of a bridge', () => {
  const plan = new AddressPlan(DEFAULT_NETWORK_SETTINGS, 'host-a');

  it('puts the host first in the IPv4 subnet and machines after it, by index', () => {
    expect(plan.gateway4).toBe('10.213.0.1');
    expect(plan.ipv4At(2)).toBe('10.213.0.2');
    expect(plan.ipv4At(258)).toBe('10.213.1.2');
    expect(plan.indexOf('10.213.1.2')).toBe(258);
    expect(plan.machineIndexes).toEqual({ first: 2, last: 65_534 });
  });

  it('derives a unique local /64 per host (and bridge), stable across restarts', () => {
    expect(plan.ipv6Prefix).toMatch(/^fd[0-9a-f]{2}:[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}::\/64$/);
    expect(new AddressPlan(DEFAULT_NETWORK_SETTINGS, 'host-a').ipv6Prefix).toBe(plan.ipv6Prefix);
    expect(new AddressPlan(DEFAULT_NETWORK_SETTINGS, 'host-b').ipv6Prefix).not.toBe(plan.ipv6Prefix);
    expect(new AddressPlan({ ...DEFAULT_NETWORK_SETTINGS, bridge: 'arbor1' }, 'host-a').ipv6Prefix).not.toBe(plan.ipv6Prefix);
    expect(plan.gateway6).toBe(plan.ipv6Prefix.replace('::/64', '::1'));
  });

  it('takes a configured /64 as it is', () => {
    const routed = new AddressPlan({ ...DEFAULT_NETWORK_SETTINGS, ipv6Prefix: '2001:db8:7:1::/64' }, 'host-a');
    expect(routed.gateway6).toBe('2001:db8:7:1::1');
    expect(routed.ipv6For('vm-1')).toMatch(/^2001:db8:7:1:/);
  });

  it("gives a machine an IPv6 address of the /64 from its id, and another on request (a collision)", () => {
    const address = plan.ipv6For('5b1f0c52-0f8e-4a57-9a4c-1c5d1f0b6a11');
    expect(address.startsWith(plan.ipv6Prefix.replace('::/64', ':'))).toBe(true);
    expect(plan.ipv6For('5b1f0c52-0f8e-4a57-9a4c-1c5d1f0b6a11')).toBe(address);
    expect(plan.ipv6For('5b1f0c52-0f8e-4a57-9a4c-1c5d1f0b6a11', 1)).not.toBe(address);
    expect(plan.ipv6For('another')).not.toBe(address);
  });

  it('makes MACs locally administered and unique per IPv4 address, and their EUI-64 link-local addresses', () => {
    expect(plan.macFor('10.213.1.2')).toBe('02:a8:0a:d5:01:02');
    expect(linkLocalOf('02:a8:0a:d5:01:02')).toBe('fe80::a8:aff:fed5:102');
    expect(plan.bridgeMac).toMatch(/^02:a7(:[0-9a-f]{2}){4}$/);
  });

  it('refuses settings that cannot work, naming the setting', () => {
    const bad = (overrides: Partial<typeof DEFAULT_NETWORK_SETTINGS>) => () => new AddressPlan({ ...DEFAULT_NETWORK_SETTINGS, ...overrides }, 'h');
    expect(bad({ bridge: 'much-too-long-bridge' })).toThrow(/ARBOR_VM_BRIDGE/);
    expect(bad({ bridge: 'br0; rm' })).toThrow(/ARBOR_VM_BRIDGE/);
    expect(bad({ ipv4Subnet: '10.213.0.0' })).toThrow(/ARBOR_VM_IPV4_SUBNET/);
    expect(bad({ ipv4Subnet: '10.213.0.0/30' })).toThrow(/ARBOR_VM_IPV4_SUBNET/);
    expect(bad({ ipv6Prefix: 'fd00::/48' })).toThrow(/ARBOR_VM_IPV6_PREFIX/);
    expect(bad({ ipv6Prefix: 'nonsense' })).toThrow(/ARBOR_VM_IPV6_PREFIX/);
  });
});
