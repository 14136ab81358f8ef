import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HostNetwork, NETWORK_REGISTRY_DIR } from '@arbor/hypervisor/primitives';
import { report, spreadOf, timed } from './stats';

const run = promisify(execFile);

/**
 * What a machine's network adds to a sandbox create and destroy, without the rest of the machine:
 * the lease and its rules (attach), the veth pair configured into a fresh network namespace (the
 * runtime hook's work), and the release. On a bridge of its own (arborbench0), removed after.
 * The driver's create also waits for the machine's sshd to answer: see the drivers benchmark.
 */
export async function benchNetwork(rounds: number): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log('network benchmark SKIPPED: needs root');
    return;
  }
  const owner = mkdtempSync(join(tmpdir(), 'arbor-bench-net-'));
  const settings = { bridge: 'arborbench0', ipv4Subnet: '10.216.0.0/24', ipv6Prefix: null, egress: true };
  const network = new HostNetwork(settings, owner);
  const samples = { attach: [] as number[], namespace: [] as number[], detach: [] as number[] };
  try {
    await network.ensureReady();
    for (let i = 0; i < rounds; i++) {
      const vmId = randomUUID();
      mkdirSync(join(owner, vmId));
      const [lease, attachMs] = await timed(() => network.attach(vmId, 'bench', 'veth'));
      samples.attach.push(attachMs);
      // It says so only once it runs in its new namespace (the setup must never touch the host's).
      const holder = spawn('unshare', ['--net', 'sh', '-c', 'echo ready; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
      await new Promise((resolve) => holder.stdout!.once('data', resolve));
      const [file, ...args] = network.namespaceSetupArgv(lease);
      const state = JSON.stringify({ ociVersion: '1.0.2', id: vmId, status: 'creating', pid: holder.pid });
      samples.namespace.push(
        (await timed(() => new Promise<void>((resolve, reject) => {
          const setup = execFile(file, args, (error) => (error ? reject(error) : resolve()));
          setup.stdin!.end(state);
        })))[1],
      );
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      samples.detach.push((await timed(() => network.detach(vmId)))[1]);
    }
    console.log(`machine networks (sandbox veth, ${rounds} rounds, bridge ${settings.bridge})`);
    report([
      ['attach (lease + nft elements)', spreadOf(samples.attach)],
      ['veth into the namespace, configured', spreadOf(samples.namespace)],
      ['detach (port, neighbours, elements, lease)', spreadOf(samples.detach)],
    ]);
  } finally {
    rmSync(owner, { recursive: true, force: true });
    await network.sweep().catch(() => undefined);
    await run('sh', ['-c', `ip link delete ${settings.bridge}; nft delete table bridge ${settings.bridge}; nft delete table inet ${settings.bridge}; true`]);
    rmSync(join(NETWORK_REGISTRY_DIR, settings.bridge), { recursive: true, force: true });
  }
}
