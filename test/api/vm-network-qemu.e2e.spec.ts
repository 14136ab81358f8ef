import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { bridgeGateways, firstLineFromVm, hostKeyOf, keyDirectory, leaseExists, leaseOf, networkTracesOf, removeDirectory, ssh, sshKeyFile } from '../support/vm-network';
import { describeUnless, rootReason } from '../support/skip-unless';

const describeAsRoot = describeUnless(rootReason);

/**
 * Each QEMU VM has a NIC on a tap of the host's bridge: reached by a real SSH client at its IPv6
 * address, walled off from the host, and a branch restored from its memory takes an address, a
 * MAC and a host key of its own (the guest wakes up with its parent's), as does a VM from a commit
 * (from_commit). Under TCG: seconds a boot.
 */
describeAsRoot('VM networks on the qemu driver (HTTP, ssh)', () => {
  let arbor: TestArbor;
  let keys: string;
  let parent: string;
  const ipOf = async (vm: string) => (await arbor.request('GET', `/api/v1/vm/${vm}/metadata`)).json.ip as string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'qemu' } });
    keys = keyDirectory();
    parent = await arbor.bootVm({ mem_size_mib: 256 });
  }, 300_000);
  afterAll(async () => {
    await arbor?.destroy();
    removeDirectory(keys);
  }, 120_000);

  it('answers a real ssh client at its IPv6 address, as root with its key, and cannot reach the host', async () => {
    const ip = await ipOf(parent);
    expect(ip).toBe(leaseOf(parent).ipv6);
    expect(await ssh(ip, await sshKeyFile(arbor, parent, keys), 'hostname; id -un')).toBe(`${parent}\nroot`);
    const apiPort = Number(new URL(arbor.url).port);
    const gateways = bridgeGateways();
    for (const host of ['127.0.0.1', gateways.ipv4, gateways.ipv6]) {
      expect({ host, answer: await firstLineFromVm(arbor, parent, host, apiPort) }).toEqual({ host, answer: 'failed' });
    }
  }, 180_000);

  it('gives a branch restored from memory its own address, MAC, host key and hostname', async () => {
    const branched = await arbor.request('POST', `/api/v1/vm/${parent}/branch`);
    expect(branched.status).toBe(201);
    expect(branched.json.memory_preserved).toBe(true);
    const child: string = branched.json.vms[0].vm_id;
    const [parentIp, childIp] = [await ipOf(parent), await ipOf(child)];
    expect(childIp).not.toBe(parentIp);
    expect(leaseOf(child).mac).not.toBe(leaseOf(parent).mac);
    expect(await hostKeyOf(childIp)).not.toBe(await hostKeyOf(parentIp));
    expect(await ssh(childIp, await sshKeyFile(arbor, child, keys), `hostname; ip -o link show dev eth0`)).toMatch(new RegExp(`^${child}\\n.*link/ether ${leaseOf(child).mac}`, 's'));
    // The parent keeps its own, unaffected by the child.
    expect(await ssh(parentIp, await sshKeyFile(arbor, parent, keys), 'hostname')).toBe(parent);

    const lease = leaseOf(child);
    expect((await arbor.request('DELETE', `/api/v1/vm/${child}`)).status).toBe(200);
    expect(networkTracesOf(lease)).toEqual([]);
    expect(leaseExists(child)).toBe(false);
  }, 300_000);

  it('gives a VM made from a commit (from_commit) its own address, MAC, host key and hostname', async () => {
    const { commit_id } = (await arbor.request('POST', `/api/v1/vm/${parent}/commit`)).json;
    const restored = await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id } });
    expect(restored.status).toBe(201);
    const child: string = restored.json.vm_id;
    const [parentIp, childIp] = [await ipOf(parent), await ipOf(child)];
    expect(childIp).toBe(leaseOf(child).ipv6);
    expect(childIp).not.toBe(parentIp);
    expect(leaseOf(child).mac).not.toBe(leaseOf(parent).mac);
    expect(await hostKeyOf(childIp)).not.toBe(await hostKeyOf(parentIp));
    expect(await ssh(childIp, await sshKeyFile(arbor, child, keys), 'hostname; ip -o link show dev eth0')).toMatch(new RegExp(`^${child}\\n.*link/ether ${leaseOf(child).mac}`, 's'));
    expect((await arbor.request('DELETE', `/api/v1/vm/${child}`)).status).toBe(200);
    expect((await arbor.request('DELETE', `/api/v1/commits/${commit_id}`)).status).toBe(204);
  }, 300_000);
});
