import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { HostNetwork } from './host-network';
import { NETWORK_REGISTRY_DIR, type NetworkLease } from './network-leases';
import type { NetworkSettings } from './network-settings';
import { groupChain } from './nft-rules';
import { describeUnless, rootReason } from '../../../../test/support/skip-unless';

/**
 * The host side of machines' networks on the real kernel, without machines: a process in a
 * network namespace of its own stands in for a sandbox machine, its namespace set up the way the
 * container runtime's hook does it (host root inside can do what a hostile guest with its own
 * kernel could: change its addresses, spoof). A bridge of its own, so it runs alongside suites
 * using the default one.
 */
const describeAsRoot = describeUnless(rootReason);

const settings: NetworkSettings = { bridge: 'arbortest0', ipv4Subnet: '10.214.0.0/24', ipv6Prefix: null, egress: true };
const sh = (command: string) => execFileSync('sh', ['-c', command], { encoding: 'utf8' });

/** A stand-in machine: its lease and the process whose network namespace is the machine's. */
interface Machine {
  lease: NetworkLease;
  holder: ChildProcess;
  netns: string;
}
const inNamespace = (machine: Machine, command: string) => sh(`nsenter --net=${machine.netns} sh -c '${command}'`);

/** A TCP server in the namespace (or on the host) answering each connection with the peer's address. */
function serve(machine: Machine | null, port: number): ChildProcess {
  const script = `use IO::Socket::IP; my $s = IO::Socket::IP->new(LocalHost => '::', LocalPort => ${port}, Listen => 5, ReuseAddr => 1, V6Only => 0) or die "listen: $@"; $| = 1; print "ready\\n"; while (my $c = $s->accept) { print $c "from ", $c->peerhost, "\\n"; close $c }`;
  const argv = machine ? ['nsenter', `--net=${machine.netns}`, 'perl', '-e', script] : ['perl', '-e', script];
  return spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
}

async function ready(server: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
}

/** Connects from the namespace (optionally from a given source address): the greeting, or the failure. */
function connectFrom(machine: Machine, host: string, port: number, source?: string): string {
  const local = source ? `LocalHost => '${source}', ` : '';
  const script = `use IO::Socket::IP; my $s = IO::Socket::IP->new(${local}PeerHost => '${host}', PeerPort => ${port}, Timeout => 2); if ($s) { my $l = <$s>; print $l } else { print "failed\\n" }`;
  return execFileSync('nsenter', [`--net=${machine.netns}`, 'perl', '-e', script], { encoding: 'utf8' }).trim();
}

function readlinkOrNull(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

describeAsRoot('HostNetwork on this host', () => {
  let owner: string;
  let network: HostNetwork;
  const servers: ChildProcess[] = [];
  const machineDir = (vmId: string) => mkdirSync(join(owner, vmId), { recursive: true });

  beforeAll(async () => {
    owner = mkdtempSync(join(tmpdir(), 'arbor-network-'));
    network = new HostNetwork(settings, owner);
    await network.ensureReady();
  });

  afterAll(async () => {
    servers.forEach((server) => server.kill());
    holders.forEach((holder) => holder.kill('SIGKILL'));
    rmSync(owner, { recursive: true, force: true });
    await network.sweep(); // every lease of this suite is abandoned now
    sh(`ip link delete ${settings.bridge} 2>/dev/null; nft delete table bridge ${settings.bridge}; nft delete table inet ${settings.bridge}; true`);
    rmSync(join(NETWORK_REGISTRY_DIR, settings.bridge), { recursive: true, force: true });
  });

  const holders: ChildProcess[] = [];

  /** Attaches a machine and sets its namespace up as the runtime's hook does (the runtime's state on stdin). */
  async function attach(group: string): Promise<Machine> {
    const vmId = randomUUID();
    machineDir(vmId);
    const lease = await network.attach(vmId, group, 'veth');
    const holder = spawn('unshare', ['--net', 'sleep', '1000'], { stdio: 'ignore' });
    holders.push(holder);
    const netns = `/proc/${holder.pid}/ns/net`;
    // unshare has made the namespace once its sleep runs in it.
    for (let i = 0; i < 200 && readlinkOrNull(netns) === readlinkOrNull('/proc/self/ns/net'); i++) await new Promise((r) => setTimeout(r, 10));
    const [file, ...args] = network.namespaceSetupArgv(lease);
    execFileSync(file, args, { input: JSON.stringify({ ociVersion: '1.0.2', id: vmId, status: 'creating', pid: holder.pid }) });
    return { lease, holder, netns };
  }

  /** The machine goes (its namespace with it, as a container's does), then its network. */
  async function remove(machine: Machine): Promise<void> {
    machine.holder.kill('SIGKILL');
    await new Promise((resolve) => machine.holder.once('exit', resolve));
    await network.detach(machine.lease.vm_id);
  }

  it('gives each machine its own addresses, MAC and port, configured in its namespace', async () => {
    const [ma, mb] = [await attach('org-a'), await attach('org-a')];
    const [a, b] = [ma.lease, mb.lease];
    expect(a.ipv4).toMatch(/^10\.214\.0\.\d+$/);
    expect(a.ipv6.startsWith(network.plan.ipv6Network.toString().replace(/::$/, ':'))).toBe(true);
    expect(new Set([a.ipv4, b.ipv4]).size).toBe(2);
    expect(new Set([a.ipv6, b.ipv6]).size).toBe(2);
    expect(readFileSync(`/sys/class/net/${a.ifname}/master/uevent`, 'utf8')).toContain(`INTERFACE=${settings.bridge}`);
    const inside = inNamespace(ma, 'ip -o addr show dev eth0; ip -o link show dev eth0; ip route; ip -6 route');
    expect(inside).toContain(`inet ${a.ipv4}/32`);
    expect(inside).toContain(`inet6 ${a.ipv6}/128`);
    expect(inside).toContain(`inet6 ${a.link_local}/64`);
    expect(inside).toContain(`link/ether ${a.mac}`);
    expect(inside).toContain(`default via ${network.plan.gateway4} dev eth0`);
    expect(inside).toContain('default via fe80::1 dev eth0');
    await remove(ma);
    await remove(mb);
  });

  it('lets a machine reach machines of its group, never the host or another group; spoofed sources are dropped', async () => {
    const [ma, ms, mo] = [await attach('org-a'), await attach('org-a'), await attach('org-b')];
    const [a, sameGroup, otherGroup] = [ma.lease, ms.lease, mo.lease];
    for (const machine of [ms, mo]) {
      const server = serve(machine, 7200);
      servers.push(server);
      await ready(server);
    }
    const host = serve(null, 7100);
    servers.push(host);
    await ready(host);

    expect(connectFrom(ma, sameGroup.ipv6, 7200)).toBe(`from ${a.ipv6}`);
    expect(connectFrom(ma, sameGroup.ipv4, 7200)).toBe(`from ::ffff:${a.ipv4}`);
    expect(connectFrom(ma, otherGroup.ipv6, 7200)).toBe('failed');
    expect(connectFrom(ma, otherGroup.ipv4, 7200)).toBe('failed');
    for (const address of [network.plan.gateway4, network.plan.gateway6, '127.0.0.1', '::1']) {
      expect({ address, answer: connectFrom(ma, address, 7100) }).toEqual({ address, answer: 'failed' });
    }
    // The host reaches machines (the edge does).
    const fromHost = execFileSync('perl', ['-e', `use IO::Socket::IP; my $s = IO::Socket::IP->new(PeerHost => '${otherGroup.ipv6}', PeerPort => 7200, Timeout => 2) or die; print scalar <$s>`], { encoding: 'utf8' });
    expect(fromHost.trim()).toBe(`from ${network.plan.gateway6}`);

    // A machine that takes its neighbour's address (or MAC) gets nothing through.
    inNamespace(ma, `ip addr add ${sameGroup.ipv4}/32 dev eth0`);
    expect(connectFrom(ma, otherGroup.ipv4, 7200, sameGroup.ipv4)).toBe('failed');
    expect(connectFrom(ma, sameGroup.ipv6, 7200)).toBe(`from ${a.ipv6}`); // its own address still works
    inNamespace(ma, `ip link set dev eth0 address ${sameGroup.mac}`);
    expect(connectFrom(ma, sameGroup.ipv6, 7200)).toBe('failed');
    for (const machine of [ma, ms, mo]) await remove(machine);
  });

  it('leaves no interface, namespace, address or rule of a detached machine', async () => {
    const machine = await attach('org-c');
    const { lease } = machine;
    const ruleset = () => sh('nft list ruleset');
    expect(ruleset()).toContain(lease.ipv6);
    await remove(machine);
    expect(existsSync(`/sys/class/net/${lease.ifname}`)).toBe(false);
    for (const trace of [lease.ipv6, lease.ipv4, lease.mac, lease.ifname, lease.link_local]) expect(ruleset()).not.toContain(trace);
    expect(ruleset()).not.toContain(groupChain('org-c')); // the group's last machine took its chain along
    expect(sh('ip -6 route; ip route; ip -6 neigh')).not.toContain(lease.ipv6);
    await network.detach(lease.vm_id); // again: nothing to do
  });

  it('attaches and detaches many machines asked at once, each with its own addresses, walls and clean-up', async () => {
    const groups = ['org-g', 'org-h'];
    const machines = await Promise.all(Array.from({ length: 6 }, (_, index) => attach(groups[index % 2])));
    const leases = machines.map((machine) => machine.lease);
    expect(new Set(leases.map((lease) => lease.ipv4)).size).toBe(6);
    expect(new Set(leases.map((lease) => lease.ipv6)).size).toBe(6);
    expect(new Set(leases.map((lease) => lease.ifname)).size).toBe(6);
    const server = serve(machines[0], 7300);
    servers.push(server);
    await ready(server);
    expect(connectFrom(machines[2], machines[0].lease.ipv6, 7300)).toBe(`from ${machines[2].lease.ipv6}`); // same group
    expect(connectFrom(machines[1], machines[0].lease.ipv6, 7300)).toBe('failed'); // the other group
    server.kill();
    await Promise.all(machines.map((machine) => remove(machine)));
    const ruleset = sh('nft list ruleset');
    for (const lease of leases) {
      expect(existsSync(`/sys/class/net/${lease.ifname}`)).toBe(false);
      for (const trace of [lease.ipv6, lease.ipv4, lease.mac]) expect(ruleset).not.toContain(trace);
      expect(await network.leaseOf(lease.vm_id)).toBeNull();
    }
    for (const group of groups) expect(ruleset).not.toContain(groupChain(group));
  });

  /** What a crash between a group's first lease and its rules leaves: the leases, no chain (nor their elements). */
  function loseGroupChain(group: string, machines: Machine[]): void {
    const table = `inet ${settings.bridge}`;
    const chain = groupChain(group);
    for (const { lease } of machines) sh(`nft delete element ${table} group4 '{ ${lease.ipv4} }'; nft delete element ${table} group6 '{ ${lease.ipv6} }'`);
    sh(`nft delete chain ${table} ${chain}; nft delete set ${table} ${chain}_4; nft delete set ${table} ${chain}_6`);
  }

  /** The group's chain holds its two rules once, and its machines `a` and `b` reach each other. */
  async function expectGroupWhole(group: string, a: Machine, b: Machine, port: number): Promise<void> {
    expect(sh(`nft list chain inet ${settings.bridge} ${groupChain(group)}`).match(/accept/g)).toHaveLength(2);
    const server = serve(b, port);
    servers.push(server);
    await ready(server);
    expect(connectFrom(a, b.lease.ipv6, port)).toBe(`from ${a.lease.ipv6}`);
    server.kill();
  }

  it('attaches a machine to a group whose chain was lost (a crash between a lease and its rules), declaring it again once', async () => {
    const lost = await attach('org-k');
    loseGroupChain('org-k', [lost]);
    // The next machine of the group finds a lease of it, so its elements go alone first: refused whole, then declared.
    const [second, third] = [await attach('org-k'), await attach('org-k')];
    await expectGroupWhole('org-k', second, third, 7400);
    for (const machine of [lost, second, third]) await remove(machine);
    expect(sh('nft list ruleset')).not.toContain(groupChain('org-k'));
  });

  it('hands a warm machine (no group) over to a group whose chain was lost, declaring it again once', async () => {
    const [lost, warm] = [await attach('org-l'), await attach('')];
    loseGroupChain('org-l', [lost]);
    const vmId = randomUUID();
    machineDir(vmId);
    const claimed: Machine = { ...warm, lease: await network.adopt(warm.lease.vm_id, vmId, 'org-l') };
    expect(claimed.lease).toEqual({ ...warm.lease, vm_id: vmId, group: 'org-l' });
    const other = await attach('org-l');
    await expectGroupWhole('org-l', claimed, other, 7500);
    for (const machine of [lost, claimed, other]) await remove(machine);
    expect(sh('nft list ruleset')).not.toContain(groupChain('org-l'));
  });

  it('takes an address whose rules were left behind (no lease holds it), clearing them', async () => {
    // Rules of a machine that went without a detach (another installation's, a crash): the next
    // free address in a stale group's set and verdict map.
    const address = network.plan.ipv4At(network.plan.machineIndexes.first);
    const stale = 'group_5ta1e5ta1e5ta1e5';
    sh(`nft add set inet ${settings.bridge} ${stale}_4 '{ type ipv4_addr; }'; nft add chain inet ${settings.bridge} ${stale}`);
    sh(`nft add element inet ${settings.bridge} ${stale}_4 '{ ${address} }'; nft add element inet ${settings.bridge} group4 '{ ${address} : jump ${stale} }'`);
    const machine = await attach('org-z');
    try {
      expect(machine.lease.ipv4).toBe(address);
      const rules = sh(`nft list table inet ${settings.bridge}`);
      expect(rules).toContain(`${address} : jump ${groupChain('org-z')}`);
      expect(sh(`nft list set inet ${settings.bridge} ${stale}_4`)).not.toContain(address);
    } finally {
      await remove(machine);
      sh(`nft delete chain inet ${settings.bridge} ${stale}; nft delete set inet ${settings.bridge} ${stale}_4; true`);
    }
  });

  it('adopts what it finds on a restart, and sweeps what belongs to no machine', async () => {
    const keptMachine = await attach('org-d');
    const kept = keptMachine.lease;
    const abandoned = (await attach('org-e')).lease;
    const ruleset = sh(`nft list table inet ${settings.bridge}; nft list table bridge ${settings.bridge}`);
    const restarted = new HostNetwork(settings, owner);
    await restarted.ensureReady();
    expect(sh(`nft list table inet ${settings.bridge}; nft list table bridge ${settings.bridge}`)).toBe(ruleset); // no duplicate
    expect(await restarted.leaseOf(kept.vm_id)).toEqual(kept);

    rmSync(join(owner, abandoned.vm_id), { recursive: true }); // its machine went without a detach
    sh(`ip link add arbvdeadbeef0 type veth peer name arbvdeadbeef1`); // a port nobody leased
    await restarted.sweep();
    expect(existsSync(`/sys/class/net/${abandoned.ifname}`)).toBe(false);
    expect(existsSync('/sys/class/net/arbvdeadbeef0')).toBe(false);
    const after = sh('nft list ruleset');
    expect(after).not.toContain(abandoned.ipv6);
    expect(after).toContain(kept.ipv6);
    expect(existsSync(`/sys/class/net/${kept.ifname}`)).toBe(true);
    expect(inNamespace(keptMachine, 'ip -o addr show dev eth0')).toContain(kept.ipv6);
    await remove(keptMachine);
  });

  it('refuses other settings for a bridge machines use', async () => {
    const machine = await attach('org-f');
    const other = new HostNetwork({ ...settings, ipv4Subnet: '10.215.0.0/24' }, owner);
    await expect(other.ensureReady()).rejects.toThrow(/1 machine\(s\) use it/);
    await remove(machine);
  });
});
