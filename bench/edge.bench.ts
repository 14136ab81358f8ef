import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect as netConnect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startBenchArbor } from './embedded-client';
import { startGuestHttpServer } from './guest-http-server';
import { startHaproxy } from './haproxy-yardstick';
import { type GetTarget, interleaved, interleavedGets } from './http-gets';
import { percentile, report, spreadOf, timed } from './stats';

const run = promisify(execFile);
const DOMAIN = 'arbor.bench';

const ratio = (through: number[], direct: number[]) => `${(percentile(through, 50) / percentile(direct, 50)).toFixed(2)}×`;

/**
 * The least any user-space TCP proxy in Node costs: accept, read the first chunk, connect to the
 * target, pipe both ways, nothing decided. The edge's figures sit beside it, so what is the edge's
 * own (parsing the Host, the route, the bookkeeping) shows apart from what a second hop costs.
 */
async function startBareProxy(address: string, port: number) {
  const server = createNetServer({ noDelay: true }, (client) => {
    client.on('error', () => client.destroy());
    client.once('data', (first) => {
      const upstream = netConnect({ host: address, port, noDelay: true }, () => {
        upstream.write(first);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      upstream.on('error', () => client.destroy());
      client.once('close', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

/**
 * The edge's own cost: an HTTP GET through it (plain HTTP by Host, and HTTPS by SNI with TLS ended
 * at the edge) against the same GET straight to the VM's address, with a server listening on a
 * VM's own address (put on loopback: the in-memory driver has no machines); beside them the same
 * GET through a bare Node proxy (the floor of a second hop), and GETs on one kept-alive connection
 * (what a request costs once connected). Root only.
 */
export async function benchEdgeProxy(rounds = 300): Promise<void> {
  console.log('Edge overhead (embedded, a server on the VM\'s address, a fresh connection per GET)');
  if (process.getuid?.() !== 0) return console.log('  skipped: needs root (a test address on loopback)');
  const bench = await startBenchArbor({ ARBOR_EDGE_DOMAIN: DOMAIN }, new InMemoryDriver());
  const server = createHttpServer((_req, res) => res.end('ok'));
  let address: string | null = null;
  let closeBare: (() => void) | undefined;
  try {
    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    address = (await bench.call('GET', `/api/v1/vm/${vm_id}/metadata`)).ip as string;
    execFileSync('ip', ['-6', 'addr', 'add', `${address}/128`, 'dev', 'lo', 'nodad']);
    await new Promise<void>((resolve) => server.listen(8080, address!, () => resolve()));
    const name = `${vm_id}.vm.${DOMAIN}`;
    const ca = readFileSync(bench.arbor.edge.caFile!, 'utf8');
    const bare = await startBareProxy(address, 8080);
    closeBare = bare.close;
    const { direct, floor, plain, tls } = await interleavedGets(rounds, {
      direct: { host: address, port: 8080, hostHeader: `[${address}]:8080` },
      floor: { port: bare.port, hostHeader: `${name}:8080` },
      plain: { port: bench.arbor.edge.httpPort!, hostHeader: `${name}:8080` },
      tls: { port: bench.arbor.edge.tlsPort, hostHeader: `${name}:8080`, tls: { servername: name, ca } },
    });
    const { directAlive, edgeAlive } = await interleavedGets(rounds, {
      directAlive: { host: address, port: 8080, hostHeader: `[${address}]:8080`, keepAlive: true },
      edgeAlive: { port: bench.arbor.edge.httpPort!, hostHeader: `${name}:8080`, keepAlive: true },
    });
    report([
      ['GET straight to the VM', spreadOf(direct)],
      ['GET through a bare Node proxy (a second hop, nothing else)', `${spreadOf(floor)}; p50 ${ratio(floor, direct)} of straight`],
      ['GET through the edge (HTTP, Host)', `${spreadOf(plain)}; p50 ${ratio(plain, direct)} of straight (goal ≤ 1.3×), ${ratio(plain, floor)} of the bare proxy`],
      ['GET through the edge (HTTPS, TLS ended there)', `${spreadOf(tls)}; p50 ${ratio(tls, direct)} of straight (TLS handshake included)`],
      ['GET on a kept-alive connection, straight', spreadOf(directAlive)],
      ['GET on a kept-alive connection, through the edge', `${spreadOf(edgeAlive)}; p50 ${ratio(edgeAlive, directAlive)} of straight`],
    ]);
  } finally {
    closeBare?.();
    server.close();
    if (address) execFileSync('ip', ['-6', 'addr', 'del', `${address}/128`, 'dev', 'lo']);
    await bench.stop();
  }
}

/** How long a new VM may take to answer SSH through the edge before the benchmark fails. */
const REACHABLE_DEADLINE_MS = 60_000;
/** The pause between two SSH attempts at a VM that does not answer yet. */
const RETRY_PAUSE_MS = 50;

/**
 * Runs `ssh … true` until it succeeds, pausing between tries; past the deadline it fails with
 * the last attempt's error (a VM that never answers is a failure, never a figure).
 */
async function sshUntilItAnswers(args: string[]): Promise<void> {
  const deadline = Date.now() + REACHABLE_DEADLINE_MS;
  for (;;) {
    try {
      await run('ssh', [...args, 'true'], { timeout: 30_000 });
      return;
    } catch (error) {
      const why = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
      if (Date.now() > deadline) throw new Error(`not reachable by SSH through the edge within ${REACHABLE_DEADLINE_MS} ms: ${why}`);
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }
}

/**
 * Into real machines (`driver`): SSH connect → first command output through the edge against
 * straight to the VM's address, an HTTP GET likewise (a server in the VM; beside the edge, a bare
 * Node proxy and, when installed, HAProxy forwarding TCP and routing by Host), and create → reachable
 * by SSH through the edge (each VM's own network and SSH server): the time from asking for the VM
 * to its first SSH command answering, its key fetched as the Vers CLI does; the deletion is not
 * timed. Any failure fails the benchmark (and `npm run bench`) with its reason.
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
      let vm_id: string | null = null;
      try {
        const [, ms] = await timed(async () => {
          vm_id = (await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } })).vm_id as string;
          await sshUntilItAnswers([...(await sshArgs(vm_id)), ...viaEdge(vm_id)]);
        });
        created.push(ms);
      } finally {
        if (vm_id) await bench.call('DELETE', `/api/v1/vm/${vm_id}`);
      }
    }

    const { vm_id } = await bench.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
    const ip = (await bench.call('GET', `/api/v1/vm/${vm_id}/metadata`)).ip as string;
    const args = await sshArgs(vm_id);
    const { sshEdge, sshDirect } = await interleaved(rounds, {
      sshEdge: () => run('ssh', [...args, ...viaEdge(vm_id), 'hostname']),
      sshDirect: () => run('ssh', [...args, `root@${ip}`, 'hostname']),
    });
    await startGuestHttpServer(async (method, path, options) => {
      const response = await fetch(bench.arbor.url + path, { method, headers: { authorization: `Bearer ${bench.arbor.createdAdminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(options.body) });
      return { status: response.status, json: await response.json().catch(() => undefined) };
    }, vm_id, 8080);
    const host = `${vm_id}.vm.${DOMAIN}:8080`;
    const bare = await startBareProxy(ip, 8080);
    // Two C proxies beside it: one forwarding TCP (a second hop alone), one routing by Host as the edge does.
    const haproxies = { httpHaproxyTcp: await startHaproxy(ip, 8080, 'tcp'), httpHaproxyHttp: await startHaproxy(ip, 8080, { http: host }) };
    const series: Record<string, GetTarget> = {
      httpDirect: { host: ip, port: 8080, hostHeader: `[${ip}]:8080` },
      httpBare: { port: bare.port, hostHeader: host },
      httpEdge: { port: bench.arbor.edge.httpPort!, hostHeader: host },
    };
    for (const [name, haproxy] of Object.entries(haproxies)) if (haproxy) series[name] = { port: haproxy.port, hostHeader: host };
    // A GET is a millisecond: many rounds, so that the p50s (and their ratio) settle on a busy machine.
    const { httpDirect, httpBare, httpEdge, httpHaproxyTcp, httpHaproxyHttp } = await interleavedGets(rounds * 25, series).finally(() => {
      bare.close();
      Object.values(haproxies).forEach((haproxy) => haproxy?.close());
    });
    const haproxyLine = (gets: number[] | undefined) => (gets ? `${spreadOf(gets)}; p50 ${ratio(gets, httpDirect)} of straight` : 'skipped: haproxy is not installed');
    report([
      ['create (wait_boot) → reachable by SSH through the edge', spreadOf(created)],
      ['SSH connect → first output, straight to the VM', spreadOf(sshDirect)],
      ['SSH connect → first output, through the edge', `${spreadOf(sshEdge)}; ${ratio(sshEdge, sshDirect)} of straight (goal ≤ 1.3×)`],
      ['HTTP GET straight to the VM', spreadOf(httpDirect)],
      ['HTTP GET through a bare Node proxy', `${spreadOf(httpBare)}; p50 ${ratio(httpBare, httpDirect)} of straight`],
      ['HTTP GET through HAProxy (C) forwarding TCP', haproxyLine(httpHaproxyTcp)],
      ['HTTP GET through HAProxy (C) routing by Host', haproxyLine(httpHaproxyHttp)],
      ['HTTP GET through the edge', `${spreadOf(httpEdge)}; p50 ${ratio(httpEdge, httpDirect)} of straight (goal ≤ 1.3×), ${ratio(httpEdge, httpBare)} of the bare proxy`],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await bench.stop();
  }
}
