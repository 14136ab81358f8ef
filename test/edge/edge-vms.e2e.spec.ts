import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { startGuestHttpServer } from '../../bench/guest-http-server';

const run = promisify(execFile);
const DOMAIN = 'arbor.test';

/**
 * The edge into real machines, on both drivers, as users reach them: a real `ssh` (Debian's
 * OpenSSH client) through `openssl s_client` as its ProxyCommand runs `hostname` as root with the
 * VM's own key; a branch child answers with its own hostname and host key; an HTTP server in the
 * VM (on `::`) is fetched by its custom domain and by `<vm_id>.vm.<domain>:<port>`.
 */
for (const driver of ['sandbox', 'qemu'] as const) {
  describe(`the edge into ${driver} VMs (real ssh, real HTTP)`, () => {
    let arbor: TestArbor;
    let dir: string;
    let ca: string;

    beforeAll(async () => {
      arbor = await startTestArbor({ env: { HYPERVISOR: driver, ARBOR_EDGE_DOMAIN: DOMAIN } });
      dir = mkdtempSync(join(tmpdir(), 'arbor-edge-ssh-'));
      ca = arbor.edge.caFile!;
    }, 300_000);
    afterAll(async () => {
      await arbor?.destroy();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 120_000);

    /** ssh through the edge, as the README says; returns stdout and the host key the VM showed. */
    const ssh = async (vm_id: string, command: string) => {
      const key = (await arbor.request('GET', `/api/v1/vm/${vm_id}/ssh_key`)).json.ssh_private_key as string;
      const keyFile = join(dir, `${vm_id}.key`);
      writeFileSync(keyFile, key, { mode: 0o600 });
      const knownHosts = join(dir, `${vm_id}.known_hosts`);
      const name = `${vm_id}.vm.${DOMAIN}`;
      const { stdout } = await run('ssh', [
        '-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${knownHosts}`,
        '-o', `ProxyCommand=openssl s_client -quiet -connect 127.0.0.1:${arbor.edge.tlsPort} -servername ${name}`,
        `root@${name}`, command,
      ], { timeout: 60_000 });
      const { stdout: hostKey } = await run('ssh-keygen', ['-l', '-f', knownHosts]);
      return { stdout: stdout.trim(), hostKey: hostKey.split(' ')[1] };
    };

    it('ssh through the edge runs hostname as root in the VM; a branch child answers with its own name and host key', async () => {
      const parent = await arbor.bootVm({ mem_size_mib: 256 });
      const own = await ssh(parent, 'hostname; id -u');
      expect(own.stdout).toBe(`${parent}\n0`);
      const branched = await arbor.request('POST', `/api/v1/vm/branch/by_vm/${parent}`);
      expect(branched.status).toBe(201);
      const child = branched.json.vms[0].vm_id as string;
      const theirs = await ssh(child, 'hostname');
      expect(theirs.stdout).toBe(child);
      expect(theirs.hostKey).not.toBe(own.hostKey);
    }, 600_000);

    it('an HTTP server in the VM, on ::, is fetched through the edge by its custom domain and by <vm_id>.vm.<domain>:<port>', async () => {
      const vm_id = await arbor.bootVm({ mem_size_mib: 256 });
      await startGuestHttpServer(arbor.request, vm_id, 80);
      await startGuestHttpServer(arbor.request, vm_id, 8080);
      const domain = `web-${vm_id.slice(0, 8)}.example.com`;
      expect((await arbor.request('POST', '/api/v1/domains', { body: { vm_id, domain } })).status).toBe(201);

      const byDomain = await run('curl', ['-sS', '--max-time', '30', '-H', `Host: ${domain}`, `http://127.0.0.1:${arbor.edge.httpPort}/shop`]);
      expect(JSON.parse(byDomain.stdout)).toEqual({ hostname: vm_id, path: '/shop', host: domain, port: 80 });

      const name = `${vm_id}.vm.${DOMAIN}`;
      const byName = await run('curl', ['-sS', '--max-time', '30', '--cacert', ca, '--connect-to', `${name}:8080:127.0.0.1:${arbor.edge.tlsPort}`, `https://${name}:8080/api`]);
      expect(JSON.parse(byName.stdout)).toEqual({ hostname: vm_id, path: '/api', host: `${name}:8080`, port: 8080 });
    }, 600_000);
  });
}
