import { createHash } from 'node:crypto';
import type { AddressPlan } from './address-plan';
import { NO_GROUP, type NetworkLease } from './network-leases';

/**
 * The nftables rules that keep machines apart, in two tables of Arbor's own, named after the
 * bridge (`bridge <name>` and `inet <name>`); nothing else on the host is touched, nor is any
 * other table flushed. Scripts for `nft -f -`: each runs as one transaction, all or nothing.
 *
 * The bridge table works on frames from machines' ports (set `ports`):
 * - anti-spoofing: a frame must carry its port's MAC, and its IPv4, IPv6 or ARP sender address
 *   must be one its port holds (`port_mac`, `port_ip4`, `port_ip6`); anything else (other
 *   ethertypes, VLAN tags) is dropped;
 * - no frame goes from one machine's port to another's: machines only ever talk to the host's
 *   gateway at layer 2 (their addresses are /32 and /128 behind it), so every packet between
 *   machines is routed by the host, where the inet table decides.
 *
 * The inet table works on packets, whose source the bridge table has vouched for:
 * - to the host itself (any of its addresses, through the bridge): only neighbour discovery and
 *   replies to connections the host opened (the edge's, say); the rest is rejected, so the API,
 *   the stores and the worker are out of reach whatever they listen on;
 * - between machines: only within one group (an org): `group4`/`group6` send a packet to its
 *   source's group chain, which accepts it if its destination is in the same group's set;
 * - out of the host (egress, when on): accepted and masqueraded to the host's address, except to
 *   link-local addresses (169.254.0.0/16: cloud metadata services belong to the host);
 * - into machines from outside: replies, and new connections over a configured (routed) IPv6
 *   prefix; nothing new over IPv4 (NATed) or a prefix nobody routes here;
 * - ICMP redirects from the host to machines are not sent: a machine must keep going through it.
 */
export class NftRules {
  constructor(
    private readonly plan: AddressPlan,
    private readonly options: { egress: boolean; inboundIpv6: boolean },
  ) {}

  get table(): string {
    return this.plan.bridge;
  }

  /**
   * The tables, sets and base chains. Safe to run again over a live table: sets and maps are only
   * added if missing (their elements, the machines', stay) and each base chain is flushed and
   * written again in the same transaction, so a restarted worker repairs its rules without a
   * moment of no rules and without duplicates.
   */
  baseScript(): string {
    const { bridge } = this.plan;
    const b = `bridge ${this.table}`;
    const i = `inet ${this.table}`;
    const br = JSON.stringify(bridge);
    const chain = (family: string, name: string, hook: string, rules: string[]) => [
      `add chain ${family} ${name} ${hook ? `{ ${hook} }` : ''}`.trimEnd(),
      `flush chain ${family} ${name}`,
      ...rules.map((rule) => `add rule ${family} ${name} ${rule}`),
    ];
    const reject = 'reject with icmpx type admin-prohibited';
    const egress = this.options.egress ? [`ip daddr 169.254.0.0/16 ${reject}`, 'accept'] : [reject];
    const masquerade = this.options.egress
      ? [
          `ip saddr ${this.plan.ipv4Subnet} oifname != ${br} masquerade`,
          // A unique local prefix is routed nowhere: its traffic leaves as the host's.
          ...(this.options.inboundIpv6 ? [] : [`ip6 saddr ${this.plan.ipv6Prefix} oifname != ${br} masquerade`]),
        ]
      : [];
    return [
      `add table ${b}`,
      `add set ${b} ports { type ifname; }`,
      `add set ${b} port_mac { type ifname . ether_addr; }`,
      `add set ${b} port_ip4 { type ifname . ipv4_addr; }`,
      `add set ${b} port_ip6 { type ifname . ipv6_addr; }`,
      ...chain(b, 'from_machine', '', [
        'iifname . ether saddr != @port_mac drop',
        'ether type arp iifname . arp saddr ether != @port_mac drop',
        'ether type arp iifname . arp saddr ip != @port_ip4 drop',
        'ether type arp accept',
        'ether type ip iifname . ip saddr != @port_ip4 drop',
        'ether type ip accept',
        'ether type ip6 iifname . ip6 saddr != @port_ip6 drop',
        'ether type ip6 accept',
        'drop',
      ]),
      ...chain(b, 'prerouting', 'type filter hook prerouting priority -300; policy accept;', ['iifname @ports jump from_machine']),
      ...chain(b, 'forward', 'type filter hook forward priority 0; policy accept;', ['iifname @ports oifname @ports drop']),
      `add table ${i}`,
      `add map ${i} group4 { type ipv4_addr : verdict; }`,
      `add map ${i} group6 { type ipv6_addr : verdict; }`,
      ...chain(i, 'to_host', '', [
        'ct state established,related accept',
        'icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept',
        reject,
      ]),
      ...chain(i, 'between_machines', '', ['ct state established,related accept', 'ip saddr vmap @group4', 'ip6 saddr vmap @group6', reject]),
      ...chain(i, 'out_of_host', '', egress),
      ...chain(i, 'into_machines', '', [
        'ct state established,related accept',
        ...(this.options.inboundIpv6 ? ['meta nfproto ipv6 accept'] : []),
        reject,
      ]),
      ...chain(i, 'input', 'type filter hook input priority filter; policy accept;', [`iifname ${br} jump to_host`]),
      ...chain(i, 'forward', 'type filter hook forward priority filter; policy accept;', [
        `iifname ${br} oifname ${br} jump between_machines`,
        `iifname ${br} jump out_of_host`,
        `oifname ${br} jump into_machines`,
      ]),
      ...chain(i, 'output', 'type filter hook output priority filter; policy accept;', [
        `oifname ${br} icmp type redirect drop`,
        `oifname ${br} icmpv6 type nd-redirect drop`,
      ]),
      ...chain(i, 'postrouting', 'type nat hook postrouting priority srcnat; policy accept;', masquerade),
      '',
    ].join('\n');
  }

  /**
   * Admits the machines' addresses on their ports and joins each to its group, if it has one
   * (before the ports exist). `existingGroups`: groups whose chain and sets are there already
   * (another machine of theirs holds a lease), written as elements alone (see groupLines).
   */
  attachScript(leases: NetworkLease[], existingGroups: ReadonlySet<string> = NONE): string {
    return this.withGroups(leases, existingGroups, leases.flatMap((lease) => this.elements(lease)));
  }

  /** Joins machines of no group (warm ones) to their leases' groups: the groups' chains and sets, their addresses in them. */
  joinScript(leases: NetworkLease[], existingGroups: ReadonlySet<string> = NONE): string {
    return this.withGroups(leases, existingGroups, leases.flatMap((lease) => this.groupElements(lease)));
  }

  private withGroups(leases: NetworkLease[], existingGroups: ReadonlySet<string>, elements: string[]): string {
    const groups = uniqueGroups(leases).filter((group) => !existingGroups.has(group));
    return [...groups.flatMap((group) => this.groupLines(group)), ...elements.map((element) => `add element ${element}`), ''].join('\n');
  }

  /**
   * Makes the sets and maps hold exactly the elements of `leases` and the group chains exactly
   * their groups, in one transaction (a live machine's elements are never missing for a moment):
   * what a sweep leaves after machines vanished without being detached. `groupChains`: the group
   * chains the table has now.
   */
  rebuildScript(leases: NetworkLease[], groupChains: string[]): string {
    const b = `bridge ${this.table}`;
    const i = `inet ${this.table}`;
    const groups = uniqueGroups(leases);
    const live = new Set(groups.map(groupChain));
    return [
      ...['ports', 'port_mac', 'port_ip4', 'port_ip6'].map((set) => `flush set ${b} ${set}`),
      `flush map ${i} group4`,
      `flush map ${i} group6`,
      ...groupChains.flatMap((chain) =>
        live.has(chain) ? [`flush set ${i} ${chain}_4`, `flush set ${i} ${chain}_6`] : this.groupRemovalLines(chain),
      ),
      ...groups.flatMap((group) => this.groupLines(group)),
      ...leases.flatMap((lease) => this.elements(lease).map((element) => `add element ${element}`)),
      '',
    ].join('\n');
  }

  /**
   * The group's chain and sets: created with the group's first machine, harmless to repeat but
   * not free: declaring a chain again (even `add` of one that exists) makes the kernel's commit
   * wait out RCU grace periods, 15–25 ms here, where adding elements alone takes 3–5 ms. So a
   * machine joining a group that has machines adds its elements alone; should the chain be
   * missing after all (a crash between a lease and its rules), that transaction fails whole and
   * the caller runs it again with these lines.
   */
  private groupLines(group: string): string[] {
    const i = `inet ${this.table}`;
    const chain = groupChain(group);
    return [
      `add set ${i} ${chain}_4 { type ipv4_addr; }`,
      `add set ${i} ${chain}_6 { type ipv6_addr; }`,
      `add chain ${i} ${chain}`,
      `flush chain ${i} ${chain}`,
      `add rule ${i} ${chain} ip daddr @${chain}_4 accept`,
      `add rule ${i} ${chain} ip6 daddr @${chain}_6 accept`,
    ];
  }

  /** Every element the machine added (see attachScript, joinScript), for `delete element`. */
  elements(lease: NetworkLease): string[] {
    const b = `bridge ${this.table}`;
    const port = JSON.stringify(lease.ifname);
    return [
      `${b} ports { ${port} }`,
      `${b} port_mac { ${port} . ${lease.mac} }`,
      `${b} port_ip4 { ${port} . ${lease.ipv4} }`,
      `${b} port_ip6 { ${port} . ${lease.ipv6}, ${port} . ${lease.link_local} }`,
      ...this.groupElements(lease),
    ];
  }

  /** The lease's addresses as keys of every group's sets (`groupChains`: the table's group chains) and of the verdict maps. */
  addressElements(lease: NetworkLease, groupChains: string[]): string[] {
    const i = `inet ${this.table}`;
    return [
      `${i} group4 { ${lease.ipv4} }`,
      `${i} group6 { ${lease.ipv6} }`,
      ...groupChains.flatMap((chain) => [`${i} ${chain}_4 { ${lease.ipv4} }`, `${i} ${chain}_6 { ${lease.ipv6} }`]),
    ];
  }

  /** The machine's addresses in its group's sets and verdict maps (none without a group). */
  private groupElements(lease: NetworkLease): string[] {
    if (lease.group === NO_GROUP) return [];
    const i = `inet ${this.table}`;
    const group = groupChain(lease.group);
    return [
      `${i} ${group}_4 { ${lease.ipv4} }`,
      `${i} ${group}_6 { ${lease.ipv6} }`,
      `${i} group4 { ${lease.ipv4} : jump ${group} }`,
      `${i} group6 { ${lease.ipv6} : jump ${group} }`,
    ];
  }

  /** Removes a group's chain and sets (once no machine of it is left). */
  groupRemovalScript(group: string): string {
    return [...this.groupRemovalLines(groupChain(group)), ''].join('\n');
  }

  private groupRemovalLines(chain: string): string[] {
    const i = `inet ${this.table}`;
    return [`delete chain ${i} ${chain}`, `delete set ${i} ${chain}_4`, `delete set ${i} ${chain}_6`];
  }
}

const NONE: ReadonlySet<string> = new Set();

/** The groups the leases are in, each once. */
function uniqueGroups(leases: NetworkLease[]): string[] {
  return [...new Set(leases.map((lease) => lease.group).filter((group) => group !== NO_GROUP))];
}

/**
 * The chain (and set name stem) of a group: a hash, since a group is any string and nft names are
 * identifiers; 64 bits, so two groups sharing one would take billions of them.
 */
export function groupChain(group: string): string {
  return `group_${createHash('sha256').update(group).digest('hex').slice(0, 16)}`;
}
