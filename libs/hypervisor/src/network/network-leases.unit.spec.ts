import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkLeases } from './network-leases';
import { AddressPlan } from './address-plan';
import { DEFAULT_NETWORK_SETTINGS } from './network-settings';
import { groupChain, NftRules } from './nft-rules';

describe('network leases shared with other installations on the host', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'arbor-leases-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const lease = (vm_id: string, group: string | null) => ({
    vm_id,
    owner: '/elsewhere/machines',
    group,
    port: 'veth',
    ifname: `arbv${vm_id.slice(0, 8)}`,
    mac: '02:00:0a:d5:00:02',
    ipv4: '10.213.0.2',
    ipv6: 'fd00::2',
    link_local: 'fe80::ff:fe00:2',
  });

  it('reads a lease written without a group as a group of its own, and a sweep\'s rules take it in', async () => {
    const grouped = '11111111-1111-4111-8111-111111111111';
    const ungrouped = '22222222-2222-4222-8222-222222222222';
    writeFileSync(join(dir, `${grouped}.json`), JSON.stringify(lease(grouped, 'org-a')));
    writeFileSync(join(dir, `${ungrouped}.json`), JSON.stringify(lease(ungrouped, null)));

    const leases = await NetworkLeases.in(dir).all();
    const groups = Object.fromEntries(leases.map((l) => [l.vm_id, l.group]));
    expect(groups[grouped]).toBe('org-a');
    expect(typeof groups[ungrouped]).toBe('string');
    expect(groups[ungrouped]).not.toBe('org-a');

    const script = new NftRules(new AddressPlan(DEFAULT_NETWORK_SETTINGS, 'host-a'), { egress: true, inboundIpv6: false }).rebuildScript(leases, []);
    expect(script).toContain(`jump ${groupChain(groups[ungrouped]!)}`);
    expect(script).toContain(`jump ${groupChain('org-a')}`);
  });
});
