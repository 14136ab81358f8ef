import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestArbor } from './arbor-harness';

/**
 * Helpers of the VM network suites: reaching machines the way a user does (Debian's ssh client
 * with the key GET /vm/{id}/ssh_key hands out), probing connections from inside a machine (bash's
 * /dev/tcp, in every image) and an "outside" host for egress: a network namespace of its own on a
 * veth pair, standing for the internet this host has none of.
 */

const execFileAsync = promisify(execFile);
const sh = (command: string) => execFileSync('sh', ['-c', command], { encoding: 'utf8' });

/** The registry the network keeps of each machine's hold on the default bridge (see network-leases.ts). */
export const DEFAULT_BRIDGE = 'arbor0';
export function leaseOf(vmId: string): { ifname: string; mac: string; ipv4: string; ipv6: string; link_local: string } {
  return JSON.parse(readFileSync(`/run/arbor/network/${DEFAULT_BRIDGE}/leases/${vmId}.json`, 'utf8'));
}
export function leaseExists(vmId: string): boolean {
  return existsSync(`/run/arbor/network/${DEFAULT_BRIDGE}/leases/${vmId}.json`);
}

/** The host's addresses on the bridge (every machine's gateway). */
export function bridgeGateways(): { ipv4: string; ipv6: string } {
  const ipv4 = sh(`ip -4 -o addr show dev ${DEFAULT_BRIDGE} scope global`).split(/\s+/)[3].split('/')[0];
  const ipv6 = sh(`ip -6 -o addr show dev ${DEFAULT_BRIDGE} scope global`).split(/\s+/)[3].split('/')[0];
  return { ipv4, ipv6 };
}

/** Another address of this host (its own uplink's), not on the bridge. */
export function hostUplinkAddress(): string {
  const route = sh('ip -4 -o route get 192.0.2.1 2>/dev/null || true');
  const source = /\bsrc (\S+)/.exec(route)?.[1];
  if (source) return source;
  return sh(`ip -4 -o addr show scope global | grep -v ' ${DEFAULT_BRIDGE} ' | head -n 1`).split(/\s+/)[3].split('/')[0];
}

/** Runs a shell script in the VM through the API; its exit code and output. */
export async function inVm(arbor: TestArbor, vm: string, script: string, key?: string): Promise<{ exit_code: number; stdout: string }> {
  const res = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { key, body: { command: ['bash', '-c', script] } });
  if (res.status !== 200) throw new Error(`exec in ${vm} answered ${res.status}: ${res.text}`);
  return { exit_code: res.json.exit_code, stdout: String(res.json.stdout).trim() };
}

/**
 * From inside the VM: connects to host:port and reads the first line the server sends (an sshd's
 * banner, the test servers' greeting); "failed" when the connection is refused, rejected or times out.
 */
export async function firstLineFromVm(arbor: TestArbor, vm: string, host: string, port: number, key?: string): Promise<string> {
  const script = `timeout 5 bash -c 'exec 3<>/dev/tcp/$0/$1 && head -n 1 <&3' ${host} ${port} 2>/dev/null | tr -d '\\r' || true; echo`;
  const { stdout } = await inVm(arbor, vm, script, key);
  return stdout === '' ? 'failed' : stdout;
}

/** The VM's own key pair's private half (GET /vm/{id}/ssh_key), in a 0600 file of `dir`. */
export async function sshKeyFile(arbor: TestArbor, vm: string, dir: string, key?: string): Promise<string> {
  const res = await arbor.request('GET', `/api/v1/vm/${vm}/ssh_key`, { key });
  if (res.status !== 200) throw new Error(`ssh_key of ${vm} answered ${res.status}: ${res.text}`);
  const file = join(dir, `${vm}-${randomUUID()}`);
  writeFileSync(file, res.json.ssh_private_key, { mode: 0o600 });
  return file;
}

/**
 * Runs a command over SSH as root at `address` (Debian's openssh-client). Asynchronous: the api
 * under test shares this process, and an event loop blocked for seconds would make it drop the
 * client's kept-alive connections.
 */
export async function ssh(address: string, keyFile: string, command: string): Promise<string> {
  const options = ['-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=20'];
  const { stdout } = await execFileAsync('ssh', ['-i', keyFile, ...options, `root@${address}`, command], { encoding: 'utf8' });
  return stdout.trim();
}

/** The Ed25519 host key the SSH server at `address` presents. */
export async function hostKeyOf(address: string): Promise<string> {
  const { stdout } = await execFileAsync('ssh-keyscan', ['-T', '10', '-t', 'ed25519', address], { encoding: 'utf8' });
  const key = stdout.trim().split(/\s+/).slice(1, 3).join(' ');
  if (!key.startsWith('ssh-ed25519 ')) throw new Error(`no host key from ${address}: ${JSON.stringify(stdout)}`);
  return key;
}

/** A scratch directory for keys; remove with rmSync. */
export function keyDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'arbor-net-keys-'));
}

/**
 * "Outside": a network namespace on a veth pair with the host (TEST-NET-2 addresses), no route
 * back to the machines' networks, and a TCP server that greets each connection with its peer's
 * address, so a test sees a machine's connection arrive as the host's (NAT).
 */
export class OutsideHost {
  readonly namespace = `arbor-outside-${randomBytes(3).toString('hex')}`;
  /** Not `arbv…`: the network's sweep takes those. */
  readonly hostSide = `arbo${randomBytes(4).toString('hex')}`;
  readonly hostAddress = '198.51.100.1';
  readonly address = '198.51.100.2';
  readonly port = 8080;
  private server: ChildProcess | null = null;

  async start(): Promise<void> {
    sh(
      [
        `ip netns add ${this.namespace}`,
        `ip link add ${this.hostSide} type veth peer name eth0 netns ${this.namespace}`,
        `ip addr add ${this.hostAddress}/24 dev ${this.hostSide}`,
        `ip link set dev ${this.hostSide} up`,
        `ip -n ${this.namespace} addr add ${this.address}/24 dev eth0`,
        `ip -n ${this.namespace} link set dev eth0 up`,
        `ip -n ${this.namespace} link set dev lo up`,
      ].join(' && '),
    );
    const script = `use IO::Socket::IP; my $s = IO::Socket::IP->new(LocalHost => '${this.address}', LocalPort => ${this.port}, Listen => 5, ReuseAddr => 1) or die "listen: $@"; $| = 1; print "ready\\n"; while (my $c = $s->accept) { print $c "from ", $c->peerhost, "\\n"; close $c }`;
    this.server = spawn('ip', ['netns', 'exec', this.namespace, 'perl', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      this.server!.stdout!.once('data', () => resolve());
      this.server!.once('exit', (code) => reject(new Error(`outside server exited (${code})`)));
    });
  }

  async stop(): Promise<void> {
    if (this.server && this.server.exitCode === null) {
      const exited = new Promise((resolve) => this.server!.once('exit', resolve));
      this.server.kill('SIGKILL');
      await exited;
    }
    sh(`ip netns delete ${this.namespace} 2>/dev/null; ip link delete ${this.hostSide} 2>/dev/null; true`);
  }
}

/** What of a machine's network the host still shows anywhere: interfaces, addresses, routes, neighbours, rules. */
export function networkTracesOf(lease: ReturnType<typeof leaseOf>): string[] {
  const views = {
    interface: existsSync(`/sys/class/net/${lease.ifname}`) ? lease.ifname : '',
    ip: sh('ip -o addr; ip route show table all; ip -6 route show table all; ip neigh; ip -6 neigh'),
    nft: sh('nft list ruleset'),
  };
  const traces: string[] = [];
  if (views.interface) traces.push(`interface ${lease.ifname}`);
  for (const value of [lease.ifname, lease.ipv6, lease.ipv4, lease.mac, lease.link_local]) {
    if (new RegExp(`(^|[^0-9a-f:.])${value.replace(/\./g, '\\.')}($|[^0-9a-f:.])`, 'm').test(views.ip)) traces.push(`ip shows ${value}`);
    if (new RegExp(`(^|[^0-9a-f:.])${value.replace(/\./g, '\\.')}($|[^0-9a-f:.])`, 'm').test(views.nft)) traces.push(`nft shows ${value}`);
  }
  return traces;
}

export function removeDirectory(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
