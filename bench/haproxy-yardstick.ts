import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free loopback port (taken, then given back for HAProxy to bind). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something listens on loopback `port`, asked of the kernel (a test connection would reach the target through HAProxy). */
function listening(port: number): boolean {
  return spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' }).stdout.trim() !== '';
}

/**
 * The configuration of one HAProxy in front of `address`:`port`. `tcp`: every connection forwarded
 * as it comes, nothing decided (the floor of a second hop). `http`: what an edge does, each
 * request's Host looked up in a map (the one entry `host`) and sent to the address found there.
 */
function configOf(dir: string, listen: number, address: string, port: number, mode: 'tcp' | { http: string }): string {
  const common = ['global', '  nbthread 1', 'defaults', '  timeout connect 5s', '  timeout client 60s', '  timeout server 60s'];
  if (mode === 'tcp') {
    const server = `${address.includes(':') ? `ipv6@${address}` : address}:${port}`;
    return [...common, 'listen forward', '  mode tcp', `  bind 127.0.0.1:${listen}`, `  server vm ${server}`, ''].join('\n');
  }
  const map = join(dir, 'routes.map');
  writeFileSync(map, `${mode.http} ${address} ${port}\n`);
  return [
    ...common,
    'frontend edge',
    '  mode http',
    `  bind 127.0.0.1:${listen}`,
    `  http-request set-var(txn.route) req.hdr(host),lower,map(${map})`,
    "  http-request set-dst var(txn.route),field(1,' ') if { var(txn.route) -m found }",
    "  http-request set-dst-port var(txn.route),field(2,' ') if { var(txn.route) -m found }",
    '  use_backend vms if { var(txn.route) -m found }',
    'backend vms',
    '  mode http',
    '  server any 0.0.0.0:0',
    '',
  ].join('\n');
}

/**
 * HAProxy (Debian's: a proxy in C, event-driven, one thread here) on a loopback port in front of
 * `address`:`port`, forwarding TCP or routing HTTP by Host (see configOf): what a second hop costs
 * outside Node, beside the bare Node proxy and the edge. Null when `haproxy` is not installed
 * (`scripts/install-debian-packages.sh edge` installs it).
 */
export async function startHaproxy(address: string, port: number, mode: 'tcp' | { http: string }): Promise<{ port: number; close: () => void } | null> {
  if (spawnSync('haproxy', ['-v']).status !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-haproxy-'));
  const listen = await freePort();
  const config = join(dir, 'haproxy.cfg');
  writeFileSync(config, configOf(dir, listen, address, port, mode));
  const child = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  const close = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100 && !listening(listen); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!listening(listen)) {
    close();
    throw new Error('haproxy did not start listening');
  }
  return { port: listen, close };
}
