import { connect, createServer, type Server } from 'node:net';
import { issueKeyForNewOrg } from '../support/issue-key';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import {
  bridgeGateways,
  firstLineFromVm,
  hostKeyOf,
  hostUplinkAddress,
  inVm,
  keyDirectory,
  leaseExists,
  leaseOf,
  networkTracesOf,
  OutsideHost,
  removeDirectory,
  ssh,
  sshKeyFile,
} from '../support/vm-network';
import { describeUnless, rootReason } from '../support/skip-unless';

const describeAsRoot = describeUnless(rootReason);

/**
 * Each VM has a network of its own on the sandbox driver (a network namespace on the host's
 * bridge), asserted from inside the VMs, through the API, and from the host with a real SSH
 * client: what a VM reaches (its org's VMs, the outside) and what it never does (the host, other
 * orgs' VMs), and that nothing of its network is left once it is deleted.
 */
describeAsRoot('VM networks on the sandbox driver (HTTP, ssh)', () => {
  let arbor: TestArbor;
  let otherOrgKey: string;
  let keys: string;
  const outside = new OutsideHost();
  /** A server on every host address, as anything on the host might listen. */
  let hostServer: Server;
  let hostPort: number;
  let vmA: string;
  let vmA2: string;
  let vmB: string;
  const ipOf = async (vm: string, key?: string) => (await arbor.request('GET', `/api/v1/vm/${vm}/metadata`, { key })).json.ip as string;
  const ipv4Of = async (vm: string, key?: string) => (await inVm(arbor, vm, `ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1`, key)).stdout;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
    otherOrgKey = (await issueKeyForNewOrg(arbor.infra.eventStore)).key;
    keys = keyDirectory();
    await outside.start();
    hostServer = createServer((socket) => socket.end('host\n'));
    await new Promise<void>((resolve) => hostServer.listen(0, '::', resolve));
    hostPort = (hostServer.address() as { port: number }).port;
    vmA = await arbor.bootVm();
    vmA2 = await arbor.bootVm();
    vmB = await arbor.bootVm({}, { key: otherOrgKey });
  }, 300_000);

  afterAll(async () => {
    await arbor?.destroy();
    await outside.stop();
    hostServer?.close();
    removeDirectory(keys);
  }, 120_000);

  it('gives each VM its own IPv6 address, reported as its ip, where a real ssh client runs commands as root with its key', async () => {
    const ip = await ipOf(vmA);
    expect(ip).toBe(leaseOf(vmA).ipv6);
    expect(ip).not.toBe(await ipOf(vmA2));
    expect((await inVm(arbor, vmA, 'ip -6 -o addr show dev eth0 scope global')).stdout).toContain(`${ip}/128`);

    const key = await sshKeyFile(arbor, vmA, keys);
    expect(await ssh(ip, key, 'hostname; id -un')).toBe(`${vmA}\nroot`);
    // Another VM's key is not this one's.
    const otherKey = await sshKeyFile(arbor, vmA2, keys);
    await expect(ssh(ip, otherKey, 'true')).rejects.toThrow(/Permission denied/);
  }, 120_000);

  it("cannot reach the host: its loopback, the API's port, any port on any host address", async () => {
    const apiPort = Number(new URL(arbor.url).port);
    const gateways = bridgeGateways();
    const uplink = hostUplinkAddress();
    // The controls: the host serves on these, and a VM does reach what it may (its org's VM).
    expect((await firstLineFromVm(arbor, vmA, await ipOf(vmA2), 22)).startsWith('SSH-2.0-')).toBe(true);
    for (const [host, port] of [
      ['127.0.0.1', apiPort],
      ['::1', apiPort],
      [gateways.ipv4, apiPort],
      [gateways.ipv6, apiPort],
      [uplink, apiPort],
      [gateways.ipv4, hostPort],
      [gateways.ipv6, hostPort],
      [uplink, hostPort],
      [outside.hostAddress, hostPort],
    ] as const) {
      expect({ host, port, answer: await firstLineFromVm(arbor, vmA, host, port) }).toEqual({ host, port, answer: 'failed' });
    }
  }, 120_000);

  it("reaches its org's VMs and never another org's, either way, over IPv6 or IPv4", async () => {
    const [a2, b] = [{ v6: await ipOf(vmA2), v4: await ipv4Of(vmA2) }, { v6: await ipOf(vmB, otherOrgKey), v4: await ipv4Of(vmB, otherOrgKey) }];
    expect(await firstLineFromVm(arbor, vmA, a2.v6, 22)).toMatch(/^SSH-2\.0-/);
    expect(await firstLineFromVm(arbor, vmA, a2.v4, 22)).toMatch(/^SSH-2\.0-/);
    expect(await firstLineFromVm(arbor, vmA, b.v6, 22)).toBe('failed');
    expect(await firstLineFromVm(arbor, vmA, b.v4, 22)).toBe('failed');
    const a = { v6: await ipOf(vmA), v4: await ipv4Of(vmA) };
    expect(await firstLineFromVm(arbor, vmB, a.v6, 22, otherOrgKey)).toBe('failed');
    expect(await firstLineFromVm(arbor, vmB, a.v4, 22, otherOrgKey)).toBe('failed');
  }, 120_000);

  it('binds a port in its own network only, never on the host', async () => {
    const port = 18_000 + Math.floor(Math.random() * 1000);
    const server = `use IO::Socket::IP; my $s = IO::Socket::IP->new(LocalHost => '::', LocalPort => ${port}, Listen => 5, ReuseAddr => 1, V6Only => 0) or die; while (my $c = $s->accept) { print $c "vm\\n"; close $c }`;
    await inVm(arbor, vmA, `setsid perl -e '${server}' </dev/null >/dev/null 2>&1 & for i in $(seq 50); do grep -qi ':${port.toString(16).toUpperCase()} ' /proc/net/tcp6 && break; sleep 0.1; done`);
    // The host reaches it at the VM's address (so it listens), and nowhere on itself.
    expect(await firstLineFromHost(await ipOf(vmA), port)).toBe('vm');
    expect(await firstLineFromHost('127.0.0.1', port)).toBe('failed');
    expect(await firstLineFromHost('::1', port)).toBe('failed');
  }, 120_000);

  it("reaches a server outside the host, as the host's address (NAT)", async () => {
    expect(await firstLineFromVm(arbor, vmA, outside.address, outside.port)).toBe(`from ${outside.hostAddress}`);
  }, 120_000);

  it('gives a branch its own host key, hostname and address', async () => {
    const branched = await arbor.request('POST', `/api/v1/vm/${vmA}/branch`);
    expect(branched.status).toBe(201);
    const child: string = branched.json.vms[0].vm_id;
    expect((await arbor.request('GET', `/api/v1/vm/${child}/status`)).json.state).toBe('running');
    const [parentIp, childIp] = [await ipOf(vmA), await ipOf(child)];
    expect(childIp).not.toBe(parentIp);
    expect(await hostKeyOf(childIp)).not.toBe(await hostKeyOf(parentIp));
    expect(await ssh(childIp, await sshKeyFile(arbor, child, keys), 'hostname')).toBe(child);
    expect(await ssh(parentIp, await sshKeyFile(arbor, vmA, keys), 'hostname')).toBe(vmA);
    expect((await arbor.request('DELETE', `/api/v1/vm/${child}`)).status).toBe(200);
  }, 180_000);

  it('gives VMs made from a commit (from_commit, branch by_commit) each their own address, MAC, host key and hostname', async () => {
    const { commit_id } = (await arbor.request('POST', `/api/v1/vm/${vmA}/commit`)).json;
    const restored = await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id } });
    expect(restored.status).toBe(201);
    const branched = await arbor.request('POST', `/api/v1/vm/branch/by_commit/${commit_id}`);
    expect(branched.status).toBe(201);
    const children: string[] = [restored.json.vm_id, branched.json.vms[0].vm_id];

    const vms = [vmA, ...children];
    const ips = await Promise.all(vms.map((vm) => ipOf(vm)));
    expect(new Set(ips).size).toBe(3);
    expect(new Set(vms.map((vm) => leaseOf(vm).mac)).size).toBe(3);
    const hostKeys = await Promise.all(ips.map((ip) => hostKeyOf(ip)));
    expect(new Set(hostKeys).size).toBe(3);
    for (const [i, child] of children.entries()) {
      const lease = leaseOf(child);
      expect(ips[i + 1]).toBe(lease.ipv6);
      // Inside, the machine is itself: its name, and its own MAC and address on eth0.
      const seen = await ssh(lease.ipv6, await sshKeyFile(arbor, child, keys), 'hostname; ip -o link show dev eth0; ip -6 -o addr show dev eth0 scope global');
      expect(seen).toMatch(new RegExp(`^${child}\\n.*link/ether ${lease.mac}.*inet6 ${lease.ipv6}/`, 's'));
    }
    expect(await ssh(ips[0], await sshKeyFile(arbor, vmA, keys), 'hostname')).toBe(vmA);
    for (const child of children) expect((await arbor.request('DELETE', `/api/v1/vm/${child}`)).status).toBe(200);
    expect((await arbor.request('DELETE', `/api/v1/commits/${commit_id}`)).status).toBe(204);
  }, 240_000);

  it('leaves no interface, address, route, neighbour or rule of a deleted VM', async () => {
    const vm = await arbor.bootVm();
    const lease = leaseOf(vm);
    expect(networkTracesOf(lease)).toEqual(expect.arrayContaining([`interface ${lease.ifname}`, `nft shows ${lease.ipv6}`]));
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    expect(networkTracesOf(lease)).toEqual([]);
    expect(leaseExists(vm)).toBe(false);
  }, 120_000);
});

/** Connects from the host; the first line the server sends, or "failed". */
function firstLineFromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(5000, () => done('failed'));
    socket.once('data', (data) => done(data.toString().split('\n')[0]));
    socket.once('error', () => done('failed'));
  });
}
