import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { startGuestHttpServer } from './guest-http-server';
import { percentile, report, spreadOf, timed } from './stats';

const run = promisify(execFile);
const DOMAIN = 'arbor.bench';

/** One GET on a fresh connection (no keep-alive): what a client pays to reach a VM's port. */
function get(options: { port: number; host?: string; hostHeader: string; tls?: { servername: string; ca: string } }): Promise<void> {
  return new Promise((resolve, reject) => {
    const common = { host: options.host ?? '127.0.0.1', port: options.port, path: '/', headers: { host: options.hostHeader }, agent: false };
    const onResponse = (res: import('node:http').IncomingMessage) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    };
    const req = options.tls ? httpsRequest({ ...common, servername: options.tls.servername, ca: options.tls.ca }, onResponse) : httpRequest(common, onResponse);
    req.once('error', reject).end();
  });
}

async function samples(rounds: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 5; i++) await fn(); // warm up
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) out.push((await timed(fn))[1]);
  return out;
}

const ratio = (through: number[], direct: number[]) => `${(percentile(through, 50) / percentile(direct, 50)).toFixed(2)}×`;

/**
 * The edge's own cost: an HTTP GET through it (plain HTTP by Host, and HTTPS by SNI with TLS ended
 * at the edge) against the same GET straight to the VM's address, with a server listening on a
 * VM's own address (put on loopback: the in-memory driver has no machines). Root only.
 */
export async function benchEdgeProxy(rounds = 300): Promise<void> {
  console.log('Edge overhead (embedded, a server on the VM\'s address, a fresh connection per GET)');
  if (process.getuid?.() !== 0) return console.log('  skipped: needs root (a test address on loopback)');
  const bench = await startBenchArbor({ ARBOR_EDGE_DOMAIN: DOMAIN }, new InMemoryDriver());
  const server = createHttpServer((_req, res) => res.end('ok'));
  let address: string | null = null;
  try {
    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    address = (await bench.call('GET', `/api/v1/vm/${vm_id}/metadata`)).ip as string;
    execFileSync('ip', ['-6', 'addr', 'add', `${address}/128`, 'dev', 'lo', 'nodad']);
    await new Promise<void>((resolve) => server.listen(8080, address!, () => resolve()));
    const name = `${vm_id}.vm.${DOMAIN}`;
    const ca = readFileSync(bench.arbor.edge.caFile!, 'utf8');
    const direct = await samples(rounds, () => get({ host: address!, port: 8080, hostHeader: `[${address}]:8080` }));
    const plain = await samples(rounds, () => get({ port: bench.arbor.edge.httpPort!, hostHeader: `${name}:8080` }));
    const tls = await samples(rounds, () => get({ port: bench.arbor.edge.tlsPort, hostHeader: `${name}:8080`, tls: { servername: name, ca } }));
    report([
      ['GET straight to the VM', spreadOf(direct)],
      ['GET through the edge (HTTP, Host)', `${spreadOf(plain)}; p50 ${ratio(plain, direct)} of straight (goal ≤ 1.3×)`],
      ['GET through the edge (HTTPS, TLS ended there)', `${spreadOf(tls)}; p50 ${ratio(tls, direct)} of straight (TLS handshake included)`],
    ]);
  } finally {
    server.close();
    if (address) execFileSync('ip', ['-6', 'addr', 'del', `${address}/128`, 'dev', 'lo']);
    await bench.stop();
  }
}

/**
 * Into real machines (`driver`): SSH connect → first command output through the edge against
 * straight to the VM's address, an HTTP GET likewise (a server in the VM), and create → reachable
 * by SSH through the edge (each VM's own network and SSH server).
 */
export async function benchEdgeVms(driver: 'sandbox' | 'qemu', rounds = 20): Promise<void> {
  console.log(`Edge into ${driver} VMs (real ssh through openssl s_client; a fresh connection each time)`);
  const bench = await startBenchArbor({ HYPERVISOR: driver, ARBOR_EDGE_DOMAIN: DOMAIN });
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-edge-'));
  try {
    const sshArgs = async (vm_id: string) => {
      const keyFile = join(dir, `${vm_id}.key`);
      writeFileSync(keyFile, (await bench.call('GET', `/api/v1/vm/${vm_id}/ssh_key`)).ssh_private_key, { mode: 0o600 });
      return ['-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR'];
    };
    const viaEdge = (vm_id: string) => ['-o', `ProxyCommand=openssl s_client -quiet -connect 127.0.0.1:${bench.arbor.edge.tlsPort} -servername ${vm_id}.vm.${DOMAIN}`, `root@${vm_id}.vm.${DOMAIN}`];

    const created: number[] = [];
    for (let i = 0; i < Math.min(rounds, 10); i++) {
      const [, ms] = await timed(async () => {
        const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
        const args = await sshArgs(vm_id);
        for (;;) {
          const ok = await run('ssh', [...args, ...viaEdge(vm_id), 'true'], { timeout: 30_000 }).then(() => true, () => false);
          if (ok) break;
        }
        await bench.call('DELETE', `/api/v1/vm/${vm_id}`);
      });
      created.push(ms);
    }

    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
    const ip = (await bench.call('GET', `/api/v1/vm/${vm_id}/metadata`)).ip as string;
    const args = await sshArgs(vm_id);
    const sshEdge = await samples(rounds, () => run('ssh', [...args, ...viaEdge(vm_id), 'hostname']));
    const sshDirect = await samples(rounds, () => run('ssh', [...args, `root@${ip}`, 'hostname']));
    await startGuestHttpServer(async (method, path, options) => {
      const response = await fetch(bench.arbor.url + path, { method, headers: { authorization: `Bearer ${bench.arbor.createdAdminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(options.body) });
      return { status: response.status, json: await response.json().catch(() => undefined) };
    }, vm_id, 8080);
    const httpDirect = await samples(rounds * 5, () => get({ host: ip, port: 8080, hostHeader: `[${ip}]:8080` }));
    const httpEdge = await samples(rounds * 5, () => get({ port: bench.arbor.edge.httpPort!, hostHeader: `${vm_id}.vm.${DOMAIN}:8080` }));
    report([
      ['create (wait_boot) → reachable by SSH through the edge', spreadOf(created)],
      ['SSH connect → first output, straight to the VM', spreadOf(sshDirect)],
      ['SSH connect → first output, through the edge', `${spreadOf(sshEdge)}; ${ratio(sshEdge, sshDirect)} of straight (goal ≤ 1.3×)`],
      ['HTTP GET straight to the VM', spreadOf(httpDirect)],
      ['HTTP GET through the edge', `${spreadOf(httpEdge)}; p50 ${ratio(httpEdge, httpDirect)} of straight (goal ≤ 1.3×)`],
    ]);
  } catch (error) {
    console.log(`  failed: ${(error as Error).message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await bench.stop();
  }
}
