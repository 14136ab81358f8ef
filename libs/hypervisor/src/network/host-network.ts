import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';
import { withHostLock } from '../host/host-lock';
import { runCommand, runCommandWithInput } from '../host/run-command';
import { AddressPlan, GATEWAY_LINK_LOCAL, linkLocalOf } from './address-plan';
import { guestInterfaceBatch, NAMESPACE_SETUP_SCRIPT, tapCreationBatch } from './machine-port';
import { NETWORK_REGISTRY_DIR, NetworkLeases, NO_GROUP, type NetworkLease } from './network-leases';
import type { NetworkSettings } from './network-settings';
import { NetworkBatch, type AdoptRequest, type AttachRequest, type NetworkWork } from './network-batch';
import { NftRules } from './nft-rules';

/** Host tools the network needs (iproute2, nftables, util-linux). */
export const NETWORK_TOOLS = ['ip', 'nft', 'nsenter'];

/** Host-side ports are `arbv` + 11 hex digits (15 bytes, the kernel's limit): what a sweep recognises. */
const PORT_PREFIX = 'arbv';
/** The settings a bridge was set up with, kept beside its leases. */
interface BridgeRecord {
  ipv4_subnet: string;
  ipv6_prefix: string;
  egress: boolean;
  inbound_ipv6: boolean;
}

/**
 * The host side of machines' networks: the bridge (addresses, forwarding, the nftables tables of
 * nft-rules.ts) and each machine's port on it, with the lease that records it (network-leases.ts).
 * Every change happens under one host-wide lock, so drivers of several installations (or test
 * runs) on one host never see each other's half-made state.
 *
 * The kernel state outlives the worker: a restarted worker finds bridge, ports and rules as it
 * left them and adopts them (setUp repairs without duplicating; a machine's lease says what it
 * holds). A sweep takes back what belongs to no machine.
 */
export class HostNetwork {
  readonly plan: AddressPlan;
  private readonly rules: NftRules;
  private readonly leases: NetworkLeases;
  private readonly record: BridgeRecord;
  private ready: Promise<void> | null = null;
  private readonly batch = new NetworkBatch((work) => this.carryOut(work));

  constructor(
    readonly settings: NetworkSettings,
    /** The driver's state directory: its machines are `<owner>/<vm id>`. */
    private readonly owner: string,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.plan = new AddressPlan(settings, hostMachineId());
    const inboundIpv6 = settings.ipv6Prefix !== null;
    this.rules = new NftRules(this.plan, { egress: settings.egress, inboundIpv6 });
    this.leases = NetworkLeases.in(join(NETWORK_REGISTRY_DIR, settings.bridge, 'leases'));
    this.record = { ipv4_subnet: this.plan.ipv4Subnet, ipv6_prefix: this.plan.ipv6Prefix, egress: settings.egress, inbound_ipv6: inboundIpv6 };
  }

  /** The bridge, its addresses, forwarding and the base rules; once per instance, and again if the bridge vanished. */
  ensureReady(): Promise<void> {
    if (this.ready && !existsSync(`/sys/class/net/${this.plan.bridge}`)) this.ready = null;
    this.ready ??= this.locked(() => this.setUp()).catch((error) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  /**
   * Gives machine `vmId` its addresses and its place on the bridge: the lease first, then its
   * rules, then a tap's port (a veth is made with the machine's namespace: namespaceSetupArgv).
   * A lease the machine already had (a start that crashed half-way) is released first; a failure
   * releases everything made. The port is named in the lease.
   *
   * Attaches and detaches asked in one turn of the event loop go together (NetworkBatch): one hold
   * of the host lock, one read of the leases, one `nft` transaction and one `ip -batch` for all.
   */
  async attach(vmId: string, group: string, port: NetworkLease['port']): Promise<NetworkLease> {
    await this.ensureReady();
    return this.batch.attach(vmId, group, port);
  }

  /**
   * Gives machine `from`'s lease, of no group (a warm machine, attached by another driver
   * instance's network: its owner is the warm machines' directory), to VM `vmId` of this one: the
   * same port and addresses, now under the VM's id and owner, joined to `group`.
   */
  async adopt(from: string, vmId: string, group: string): Promise<NetworkLease> {
    await this.ensureReady();
    return this.batch.adopt(from, vmId, group);
  }

  /** Removes the machine's port, rules and addresses. Idempotent. */
  async detach(vmId: string): Promise<void> {
    await this.batch.detach(vmId);
  }

  /** The machine's lease, if this driver's machine holds one. */
  async leaseOf(vmId: string): Promise<NetworkLease | null> {
    const lease = await this.leases.get(vmId);
    return lease?.owner === this.owner ? lease : null;
  }

  /**
   * `ip -batch` lines that make a guest's eth0 the machine's (its MAC and addresses), for a
   * guest that configures itself (qemu, through its agent).
   */
  guestInterfaceBatch(lease: NetworkLease): string {
    return guestInterfaceBatch(lease, this.plan);
  }

  /**
   * The argv of a program the host runs once a veth lease's machine has its network namespace,
   * with the runtime's state (its pid) on stdin (see NAMESPACE_SETUP_SCRIPT): the machine's port
   * and its configured eth0.
   */
  namespaceSetupArgv(lease: NetworkLease): string[] {
    if (lease.port !== 'veth') throw new Error(`${lease.vm_id} has a ${lease.port} port, not a veth`);
    return ['sh', '-c', NAMESPACE_SETUP_SCRIPT, 'arbor-network', lease.ifname, this.plan.bridge, guestInterfaceBatch(lease, this.plan)];
  }

  /** The gateway addresses a guest routes through (for tests and documentation of a machine). */
  get gateways(): { ipv4: string; ipv6: string; link_local: string } {
    return { ipv4: this.plan.gateway4, ipv6: this.plan.gateway6, link_local: GATEWAY_LINK_LOCAL };
  }

  /**
   * Takes back what belongs to no machine: leases whose machine directory is gone (released as a
   * detach would), `arbv…` interfaces no lease of any bridge names, and rule elements and group
   * chains no lease of this bridge accounts for. Run at a worker's start.
   */
  async sweep(): Promise<void> {
    await this.ensureReady();
    await this.locked(async () => {
      const held = await this.leases.all();
      const abandoned = held.filter((lease) => NetworkLeases.abandoned(lease));
      for (const lease of abandoned) this.log(`network: releasing ${lease.vm_id} (${lease.ipv6}, ${lease.ipv4}): its machine is gone`);
      await this.release(abandoned, held);
      const ports = new Set((await leasesOfEveryBridge()).map((lease) => lease.ifname));
      for (const name of await readdir('/sys/class/net').catch(() => [] as string[])) {
        if (!name.startsWith(PORT_PREFIX) || ports.has(name)) continue;
        this.log(`network: removing interface ${name}: no machine holds it`);
        await runCommand('ip', ['link', 'delete', name]).catch(() => undefined); // a pair's other end may have taken it along
      }
      await this.nft(this.rules.rebuildScript(await this.leases.all(), await this.groupChains()));
    });
  }

  private async setUp(): Promise<void> {
    const registry = join(NETWORK_REGISTRY_DIR, this.plan.bridge);
    await mkdir(registry, { recursive: true, mode: 0o700 });
    const recordFile = join(registry, 'bridge.json');
    const existing = await readJsonFile<BridgeRecord>(recordFile);
    if (existing && JSON.stringify(existing) !== JSON.stringify(this.record)) {
      const holders = await this.leases.all();
      if (holders.length > 0) {
        throw new Error(
          `bridge ${this.plan.bridge} is set up as ${JSON.stringify(existing)} and ${holders.length} machine(s) use it; ` +
            `this installation asks for ${JSON.stringify(this.record)}: delete those machines first, or name another bridge (ARBOR_VM_BRIDGE)`,
        );
      }
      this.log(`network: setting up bridge ${this.plan.bridge} again with new settings (no machine uses it)`);
      await this.tearDown();
    }
    if (!existsSync(`/sys/class/net/${this.plan.bridge}`)) await this.createBridge();
    await runCommandWithInput('ip', ['-batch', '-'], this.bridgeAddressBatch());
    await this.enableForwarding();
    await this.nft(this.rules.baseScript());
    await writeJsonAtomic(recordFile, this.record);
    this.log(`network: bridge ${this.plan.bridge} ready (${this.plan.ipv6Prefix}, ${this.plan.ipv4Subnet}, egress ${this.settings.egress ? 'on' : 'off'})`);
  }

  private async createBridge(): Promise<void> {
    await this.refuseOverlaps();
    const { bridge, bridgeMac } = this.plan;
    await runCommandWithInput('ip', ['-batch', '-'], [`link add name ${bridge} address ${bridgeMac} type bridge`, `link set dev ${bridge} addrgenmode none`, ''].join('\n'));
  }

  /** Idempotent: the host's gateway addresses on the bridge, and the bridge up. */
  private bridgeAddressBatch(): string {
    const { bridge, gateway4, gateway6, ipv4PrefixLength } = this.plan;
    return [
      `addr replace ${gateway4}/${ipv4PrefixLength} dev ${bridge}`,
      `addr replace ${gateway6}/64 dev ${bridge} nodad`,
      `addr replace ${GATEWAY_LINK_LOCAL}/64 dev ${bridge} nodad`,
      `link set dev ${bridge} up`,
      '',
    ].join('\n');
  }

  /** A new bridge's subnets must not shadow a network the host already reaches. */
  private async refuseOverlaps(): Promise<void> {
    const ours: [string, ipaddr.IPv4 | ipaddr.IPv6, number][] = [
      ['ARBOR_VM_IPV4_SUBNET', this.plan.ipv4Network, this.plan.ipv4PrefixLength],
      ['ARBOR_VM_IPV6_PREFIX', this.plan.ipv6Network, 64],
    ];
    for (const family of ['-4', '-6']) {
      const routes = JSON.parse(await runCommand('ip', ['-json', family, 'route', 'show', 'table', 'all'])) as { dst: string; dev?: string }[];
      for (const route of routes) {
        if (route.dst === 'default' || route.dev === this.plan.bridge) continue;
        const cidr = route.dst.includes('/') ? route.dst : `${route.dst}/${family === '-4' ? 32 : 128}`;
        if (!ipaddr.isValidCIDR(cidr)) continue;
        const [network, length] = ipaddr.parseCIDR(cidr);
        if (network.kind() === 'ipv6' && (network as ipaddr.IPv6).range() === 'linkLocal') continue;
        for (const [setting, subnet, subnetLength] of ours) {
          // Two prefixes overlap when the shorter one contains the longer one's network.
          if (network.kind() === subnet.kind() && network.match(subnet, Math.min(length, subnetLength))) {
            throw new Error(`${setting} (${subnet.toString()}/${subnetLength}) overlaps ${route.dst}, which the host routes through ${route.dev ?? 'another route'}: choose another`);
          }
        }
      }
    }
  }

  /**
   * Machines' packets are forwarded by the host. Turning IPv6 forwarding on makes the kernel
   * ignore router advertisements on interfaces that take them (accept_ra 1), which would cost the
   * host its own IPv6 configuration: those are moved to accept_ra 2 (take them even when
   * forwarding) first. Logged, since it changes the host.
   */
  private async enableForwarding(): Promise<void> {
    const ipv4 = '/proc/sys/net/ipv4/ip_forward';
    if ((await readFile(ipv4, 'utf8')).trim() !== '1') {
      await writeFile(ipv4, '1');
      this.log('network: enabled IPv4 forwarding (net.ipv4.ip_forward=1)');
    }
    const ipv6 = '/proc/sys/net/ipv6/conf/all/forwarding';
    if ((await readFile(ipv6, 'utf8')).trim() === '1') return;
    for (const name of await readdir('/proc/sys/net/ipv6/conf')) {
      if (['all', 'default', 'lo'].includes(name)) continue;
      const acceptRa = `/proc/sys/net/ipv6/conf/${name}/accept_ra`;
      if ((await readFile(acceptRa, 'utf8').catch(() => '')).trim() === '1') {
        await writeFile(acceptRa, '2');
        this.log(`network: ${name} keeps taking router advertisements while forwarding (accept_ra=2)`);
      }
    }
    await writeFile(ipv6, '1');
    this.log('network: enabled IPv6 forwarding (net.ipv6.conf.all.forwarding=1)');
  }

  /** Removes the bridge and its tables (only when no machine uses them). */
  private async tearDown(): Promise<void> {
    if (existsSync(`/sys/class/net/${this.plan.bridge}`)) await runCommand('ip', ['link', 'delete', this.plan.bridge]);
    for (const family of ['bridge', 'inet']) await runCommand('nft', ['delete', 'table', family, this.rules.table]).catch(() => undefined);
  }

  /**
   * Carries out a batch of attaches and detaches under one hold of the host lock (see attach):
   * the detaches first (their addresses are free for the attaches), then the attaches, each
   * step for all of them at once. Should a step for all fail, it is taken one machine at a time,
   * so one bad machine fails alone.
   */
  private async carryOut({ attaches, adoptions, detaches }: NetworkWork): Promise<void> {
    await this.locked(async () => {
      const held = await this.leases.all();
      await this.adoptAll(adoptions, held);
      const released = new Set<string>();
      const stale = [...detaches, ...attaches.map((request) => request.vmId)];
      const toRelease = held.filter((lease) => stale.includes(lease.vm_id));
      await this.release(toRelease, held);
      toRelease.forEach((lease) => released.add(lease.vm_id));
      const leases = held.filter((lease) => !released.has(lease.vm_id));
      // A group some kept lease is in has its chain and sets (a release takes them with the group's last lease).
      const existingGroups = new Set(leases.map((lease) => lease.group));
      const names = new Set((await leasesOfEveryBridge()).filter((lease) => !released.has(lease.vm_id)).map((lease) => lease.ifname));
      for (const request of attaches) {
        try {
          const lease = this.allocate(request, leases, names);
          leases.push(lease);
          names.add(lease.ifname);
          request.lease = lease;
        } catch (error) {
          request.error = error as Error;
        }
      }
      const allocated = attaches.filter((request) => request.lease);
      // The leases before anything they name is made (a crash leaves them for a sweep).
      await Promise.all(allocated.map((request) => this.leases.put(request.lease!)));
      await this.makePorts(allocated, leases, existingGroups);
    });
  }

  /**
   * The new leases first (their machines' directories exist: the claims rename them in after),
   * then one transaction joining them to their groups, then the old leases go. A crash leaves two
   * leases of one port, the new one abandoned until its directory appears: a sweep takes it back.
   */
  private async adoptAll(adoptions: AdoptRequest[], held: NetworkLease[]): Promise<void> {
    const joined: NetworkLease[] = [];
    for (const request of adoptions) {
      const warm = held.find((lease) => lease.vm_id === request.from);
      if (!warm || warm.group !== NO_GROUP) {
        request.error = new Error(`machine ${request.from} holds no lease of no group to hand to ${request.vmId}`);
        continue;
      }
      const lease = { ...warm, vm_id: request.vmId, owner: this.owner, group: request.group };
      joined.push(lease);
      request.lease = lease;
    }
    if (joined.length === 0) return;
    const existingGroups = new Set(held.map((lease) => lease.group));
    await Promise.all(joined.map((lease) => this.leases.put(lease)));
    await this.nft(this.rules.joinScript(joined, existingGroups)).catch(async () => {
      for (const lease of joined) {
        // Alone, its group declared whether or not it has machines (a chain a crash lost), with a
        // second try as for an attach (makePorts): the addresses are this lease's own.
        const join = () => this.nft(this.rules.joinScript([lease]));
        await join()
          .catch(async () => {
            await this.clearAddresses(lease);
            await join();
          })
          .catch((error: Error) => {
            adoptions.find((candidate) => candidate.vmId === lease.vm_id)!.error = error;
          });
      }
    });
    await Promise.all(adoptions.filter((request) => request.lease).map((request) => this.leases.remove(request.error ? request.vmId : request.from)));
    // What the rest of the batch sees: the leases as they now are.
    const adopted = adoptions.filter((request) => request.lease && !request.error);
    for (const request of adopted) held.splice(held.findIndex((lease) => lease.vm_id === request.from), 1, request.lease!);
  }

  /**
   * Rules, then taps, for new leases; a machine whose part fails is released and fails alone.
   * `existingGroups`: the groups whose chains are there already (NftRules.attachScript).
   */
  private async makePorts(requests: AttachRequest[], leases: NetworkLease[], existingGroups: ReadonlySet<string>): Promise<void> {
    const made = requests.map((request) => request.lease!);
    if (made.length === 0) return;
    const failed = new Map<string, Error>();
    const step = async (all: (batch: NetworkLease[]) => Promise<unknown>) => {
      const live = made.filter((lease) => !failed.has(lease.vm_id));
      if (live.length === 0) return;
      await all(live).catch(async () => {
        for (const lease of live) await all([lease]).catch((error: Error) => failed.set(lease.vm_id, error));
      });
    };
    await step(async (batch) => {
      // Alone, a machine's rules get a second try with whatever of its addresses the rules hold
      // taken out first: no lease holds them (its lease is the one just made), so they are stale;
      // and with its group declared (a chain a crash lost).
      const attach = (groups: ReadonlySet<string>) => this.nft(this.rules.attachScript(batch, groups));
      if (batch.length > 1) return attach(existingGroups);
      return attach(existingGroups).catch(async () => {
        await this.clearAddresses(batch[0]);
        return attach(new Set());
      });
    });
    await step((batch) => {
      const taps = batch.filter((lease) => lease.port === 'tap');
      return taps.length ? runCommandWithInput('ip', ['-batch', '-'], taps.map((lease) => tapCreationBatch(lease, this.plan.bridge)).join('')) : Promise.resolve();
    });
    if (failed.size === 0) return;
    const broken = made.filter((lease) => failed.has(lease.vm_id));
    await this.release(broken, leases).catch((cleanup: Error) => this.log(`network: releasing after a failed attach failed: ${cleanup.message}`));
    for (const request of requests) {
      if (failed.has(request.vmId)) request.error = failed.get(request.vmId);
    }
    for (const lease of broken) leases.splice(leases.indexOf(lease), 1);
  }

  /** The lowest free IPv4 index, the VM's hashed IPv6 address (another try on a clash), a port name no bridge uses. */
  private allocate(request: AttachRequest, leases: NetworkLease[], names: Set<string>): NetworkLease {
    const { vmId, group, port } = request;
    const taken = new Set(leases.map((lease) => this.plan.indexOf(lease.ipv4)));
    const { first, last } = this.plan.machineIndexes;
    let index = first;
    while (index <= last && taken.has(index)) index++;
    if (index > last) throw new Error(`no IPv4 address left for a machine in ${this.plan.ipv4Subnet}: ${leases.length} machines hold them all`);
    const ipv4 = this.plan.ipv4At(index);
    const takenIpv6 = new Set(leases.map((lease) => lease.ipv6));
    let ipv6 = this.plan.ipv6For(vmId);
    for (let attempt = 1; takenIpv6.has(ipv6); attempt++) ipv6 = this.plan.ipv6For(vmId, attempt);
    const mac = this.plan.macFor(ipv4);
    let ifname = portName(vmId, 0);
    for (let attempt = 1; names.has(ifname) || existsSync(`/sys/class/net/${ifname}`); attempt++) ifname = portName(vmId, attempt);
    return { vm_id: vmId, owner: this.owner, group, port, ifname, mac, ipv4, ipv6, link_local: linkLocalOf(mac) };
  }

  /**
   * Ports first (once one is gone, no frame of its machine passes; a veth's other end goes with
   * it), the host's neighbour entries for them, then their rule elements, the chains of groups
   * left without a machine, and the leases. Parts already gone are skipped, so a release
   * interrupted by a crash can run again. `held`: every lease of the bridge, these included.
   */
  private async release(leases: NetworkLease[], held: NetworkLease[]): Promise<void> {
    if (leases.length === 0) return;
    // The host's neighbour entries for the machines sit on the bridge, not the ports: they would outlive them.
    const neighbours = leases.flatMap((lease) => [lease.ipv4, lease.ipv6, lease.link_local].map((address) => `neigh flush to ${address} dev ${this.plan.bridge}`));
    await this.deletePorts(leases.map((lease) => lease.ifname), neighbours);

    const deletions = leases.flatMap((lease) => this.rules.elements(lease).map((element) => `delete element ${element}`));
    await this.nft(`${deletions.join('\n')}\n`).catch(async () => {
      // Some were gone already (a release that crashed half-way): one at a time, the rest.
      for (const deletion of deletions) await this.nft(`${deletion}\n`).catch(() => undefined);
    });
    const going = new Set(leases.map((lease) => lease.vm_id));
    const remaining = new Set(held.filter((lease) => !going.has(lease.vm_id)).map((lease) => lease.group));
    const groups = leases.map((lease) => lease.group).filter((group) => group !== NO_GROUP);
    const emptied = [...new Set(groups)].filter((group) => !remaining.has(group));
    for (const group of emptied) await this.nft(this.rules.groupRemovalScript(group)).catch(() => undefined);
    await Promise.all(leases.map((lease) => this.leases.remove(lease.vm_id)));
  }

  /**
   * Takes the lease's addresses out of every group's set and verdict map, one element at a time
   * (an element that is not there fails alone): what a machine that went without its rules (an
   * installation of another version on the bridge, a crash) may have left on addresses now leased
   * anew. Only on a second try: a first one that fails is the sign.
   */
  private async clearAddresses(lease: NetworkLease): Promise<void> {
    this.log(`network: clearing stale rules of ${lease.ipv4} and ${lease.ipv6} before ${lease.vm_id} takes them`);
    for (const element of this.rules.addressElements(lease, await this.groupChains())) await this.nft(`delete element ${element}\n`).catch(() => undefined);
  }

  /**
   * Deletes the ports that are there, in one `ip` run with `also` (lines of no consequence if they
   * fail: no bridge, no entries). A veth goes with its namespace, but the kernel tears it down after
   * the namespace's last process has gone: it may vanish between the look and the delete, which is
   * the outcome we want; only a port still there afterwards is a failure.
   */
  private async deletePorts(ifnames: string[], also: string[] = []): Promise<void> {
    const present = (ifname: string) => existsSync(`/sys/class/net/${ifname}`);
    const deletions = ifnames.filter(present).map((ifname) => `link delete ${ifname}`);
    const lines = [...deletions, ...also];
    if (lines.length === 0) return;
    // -force: every line is tried, whichever failed before it.
    await runCommandWithInput('ip', ['-force', '-batch', '-'], `${lines.join('\n')}\n`).catch(() => undefined);
    const left = deletions.length ? ifnames.filter(present) : [];
    if (left.length > 0) throw new Error(`could not delete port(s) ${left.join(', ')}`);
  }

  private async groupChains(): Promise<string[]> {
    const listing = JSON.parse(await runCommand('nft', ['-json', 'list', 'chains', 'inet'])) as { nftables: { chain?: { table: string; name: string } }[] };
    return listing.nftables
      .map((entry) => entry.chain)
      .filter((chain) => chain?.table === this.rules.table && chain.name.startsWith('group_'))
      .map((chain) => chain!.name);
  }

  private nft(script: string): Promise<string> {
    return runCommandWithInput('nft', ['-f', '-'], script);
  }

  private async locked<T>(work: () => Promise<T>): Promise<T> {
    await mkdir(NETWORK_REGISTRY_DIR, { recursive: true, mode: 0o700 });
    return withHostLock(join(NETWORK_REGISTRY_DIR, '.lock'), work);
  }
}

/** Every lease of every bridge on the host (interface and namespace names are host-wide). */
async function leasesOfEveryBridge(): Promise<NetworkLease[]> {
  const bridges = await readdir(NETWORK_REGISTRY_DIR, { withFileTypes: true }).catch(() => []);
  const leases = await Promise.all(
    bridges.filter((entry) => entry.isDirectory()).map((entry) => NetworkLeases.in(join(NETWORK_REGISTRY_DIR, entry.name, 'leases')).all()),
  );
  return leases.flat();
}

function portName(vmId: string, attempt: number): string {
  return PORT_PREFIX + createHash('sha256').update(`${vmId}/${attempt}`).digest('hex').slice(0, 11);
}

/** What makes this host's unique local prefix its own: systemd's machine id, else the hostname. */
function hostMachineId(): string {
  try {
    const id = readFileSync('/etc/machine-id', 'utf8').trim();
    if (id) return id;
  } catch {
    // no machine id (a minimal container): the hostname will do
  }
  return hostname();
}
