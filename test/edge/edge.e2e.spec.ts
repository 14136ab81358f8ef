import { execFile, execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { InMemoryDriver } from '@arbor/hypervisor';
import { createLog } from '@arbor/observability';
import { Writable } from 'node:stream';
import { createEdgeCa, issueWildcardCertificate } from '../../apps/edge/src/tls/edge-ca';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pollUntil } from '../support/poll-until';
import { fakeHttp, fakeSsh, FAKE_SSH_BANNER, VmAddressServices } from '../support/vm-address-services';
import { describeUnless, rootReason } from '../support/skip-unless';

const DOMAIN = 'arbor.test';
const runAsRoot = describeUnless(rootReason);

/** Reads from a socket until `pattern` shows up (bounded), returning everything read. */
function readUntil(socket: Socket, pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; got ${JSON.stringify(text)}`)), timeoutMs);
    const onData = (data: Buffer) => {
      text += data.toString('latin1');
      if (pattern.test(text)) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => {
      clearTimeout(timer);
      if (!pattern.test(text)) reject(new Error(`closed before ${pattern}; got ${JSON.stringify(text)}`));
    });
  });
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

/**
 * The edge in the embedded process, over real TLS and TCP, routing to services that listen on
 * the VMs' own addresses (the in-memory driver has no machines, so the addresses are put on the
 * loopback interface): SSH by SNI, VM ports by Host, custom domains by Host and by SNI (passed
 * through), the certificate from Arbor's CA, refusals with their reasons, and connections ended
 * by a deletion.
 */
runAsRoot('the edge (TLS, SNI, Host) into VMs', () => {
  let arbor: TestArbor;
  let ca: string;
  const services: VmAddressServices[] = [];

  /** A running VM whose address answers on SSH (22), HTTP (80, 8080), and TLS for app domains (443). */
  const bootVmWithServices = async () => {
    const vm_id = await arbor.bootVm();
    const { ip } = (await arbor.request('GET', `/api/v1/vm/${vm_id}/metadata`)).json;
    const vm = VmAddressServices.add(ip);
    services.push(vm);
    await vm.listen(22, fakeSsh);
    await vm.listen(80, fakeHttp(80));
    await vm.listen(8080, fakeHttp(8080));
    return { vm_id, ip, vm, name: `${vm_id}.vm.${DOMAIN}` };
  };
  const tls = (servername: string | undefined, options: { ca?: string } = {}) =>
    new Promise<TLSSocket>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: arbor.edge.tlsPort, servername, ca: options.ca ?? ca, rejectUnauthorized: true });
      socket.once('secureConnect', () => resolve(socket));
      socket.once('error', reject);
    });
  const https = (servername: string, host: string, path = '/') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: arbor.edge.tlsPort, servername, path, ca, headers: { host }, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.once('error', reject).end();
    });
  const http = (host: string, path = '/') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: arbor.edge.httpPort!, path, headers: { host }, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.once('error', reject).end();
    });

  /** What the service logged at info and above, one JSON line each. */
  const logged: { level: string; msg: string }[] = [];
  const log = createLog({ level: 'info', format: 'json' }, new Writable({ write: (chunk, _encoding, done) => done(void logged.push(JSON.parse(String(chunk)))) }));

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_EDGE_DOMAIN: DOMAIN }, log });
    ca = readFileSync(arbor.edge.caFile!, 'utf8');
  });
  afterAll(async () => {
    await Promise.all(services.map((vm) => vm.close()));
    await arbor?.destroy();
  });

  it("serves *.vm.<domain> with a certificate of Arbor's own CA, name-constrained to vm.<domain>, kept 0600 in the data dir", async () => {
    expect(arbor.edge.caFile).toBe(`${arbor.config.dataDir}/edge/ca-vm.${DOMAIN}.crt`);
    const caCert = new X509Certificate(ca);
    expect(caCert.ca).toBe(true);
    expect(execFileSync('openssl', ['x509', '-noout', '-ext', 'nameConstraints'], { input: ca }).toString()).toMatch(/critical\s+Permitted:\s+DNS:vm\.arbor\.test/);
    expect(statSync(`${arbor.config.dataDir}/edge/ca-vm.${DOMAIN}.pem`).mode & 0o777).toBe(0o600);
    const { vm_id } = await bootVmWithServices();
    const socket = await tls(`${vm_id}.vm.${DOMAIN}`); // verified against the CA, for that name
    const served = new X509Certificate(socket.getPeerCertificate().raw);
    expect(served.subjectAltName).toBe(`DNS:*.vm.${DOMAIN}, DNS:vm.${DOMAIN}`);
    expect(served.checkIssued(caCert)).toBe(true);
    expect(new Date(served.validTo).getTime() - Date.now()).toBeLessThanOrEqual(398 * 86_400_000);
    socket.destroy();

    // Even with its key, the CA signs for nothing but the VMs' names: a client that trusts it refuses the rest.
    const caPair = readFileSync(`${arbor.config.dataDir}/edge/ca-vm.${DOMAIN}.pem`, 'utf8');
    const forged = await issueWildcardCertificate({ key: caPair, cert: ca }, 'bank.example');
    const impostor = createTlsServer({ key: forged.key, cert: forged.cert + ca }, (s) => s.end('x'));
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', () => resolve()));
    const port = (impostor.address() as { port: number }).port;
    const refused = await new Promise<Error>((resolve) => tlsConnect({ host: '127.0.0.1', port, servername: 'www.bank.example', ca }).once('error', resolve));
    impostor.close();
    expect(refused.message).toMatch(/permitted subtree violation/i);
  });

  it('SNI <vm_id>.vm.<domain> reaches the VM\'s SSH port, whoever speaks first', async () => {
    const { name } = await bootVmWithServices();
    const speaking = await tls(name);
    speaking.write('SSH-2.0-OpenSSH_9.2p1 client\r\n');
    expect(await readUntil(speaking, /echo:SSH-2\.0-OpenSSH_9\.2p1 client/)).toContain(FAKE_SSH_BANNER);
    speaking.destroy();
    const silent = await tls(name); // a client that waits for the server's banner
    expect(await readUntil(silent, /SSH-2\.0/)).toBe(FAKE_SSH_BANNER);
    silent.destroy();
  });

  it('openssl s_client -quiet (the ProxyCommand of a plain ssh) carries the SSH stream both ways', async () => {
    const { name } = await bootVmWithServices();
    const client = spawn('openssl', ['s_client', '-quiet', '-connect', `127.0.0.1:${arbor.edge.tlsPort}`, '-servername', name], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      let out = '';
      client.stdout.on('data', (d) => (out += d));
      client.stdin.write('SSH-2.0-probe\r\n');
      await pollUntil(async () => out.includes('echo:SSH-2.0-probe'), { timeoutMs: 15_000 });
      expect(out.startsWith(FAKE_SSH_BANNER)).toBe(true);
    } finally {
      client.kill();
    }
  });

  it('HTTPS to <vm_id>.vm.<domain>:<port> reaches that port of the VM (80 without one); plain HTTP too', async () => {
    const { name } = await bootVmWithServices();
    expect(JSON.parse((await https(name, `${name}:8080`, '/hello?x=1')).body)).toEqual({ port: 8080, method: 'GET', path: '/hello?x=1', host: `${name}:8080` });
    expect(JSON.parse((await https(name, name)).body)).toMatchObject({ port: 80 });
    expect(JSON.parse((await http(`${name}:8080`, '/plain')).body)).toMatchObject({ port: 8080, path: '/plain' });
    expect(JSON.parse((await http(name)).body)).toMatchObject({ port: 80 });
    // A Host that is not the connection's VM: 421, said in words.
    const other = await https(name, `${crypto.randomUUID()}.vm.${DOMAIN}:8080`);
    expect(other.status).toBe(421);
    expect(other.body).toMatch(/this connection is for/);
  });

  it('a custom domain: plain HTTP by Host to port 80, TLS by SNI passed through to port 443 with the VM\'s own certificate', async () => {
    const { vm_id, vm } = await bootVmWithServices();
    const domain = `shop-${vm_id.slice(0, 8)}.example.com`;
    expect((await arbor.request('POST', '/api/v1/domains', { body: { vm_id, domain } })).status).toBe(201);
    expect(JSON.parse((await http(domain, '/cart')).body)).toEqual({ port: 80, method: 'GET', path: '/cart', host: domain });
    expect(JSON.parse((await http(`${domain.toUpperCase()}:80`)).body)).toMatchObject({ port: 80 });

    // The VM holds its domain's certificate (from a CA of its own here): the edge never ends that TLS.
    const vmCa = await createEdgeCa('example.com');
    const vmCert = await issueWildcardCertificate(vmCa, 'example.com');
    const tlsServer = createTlsServer({ key: vmCert.key, cert: vmCert.cert }, (socket) => socket.end(`hello from ${socket.servername}`));
    await vm.listen(443, (socket) => tlsServer.emit('connection', socket));
    const socket = await tls(domain, { ca: vmCa.cert });
    expect(await readUntil(socket, /hello from/)).toBe(`hello from ${domain}`);
    expect(new X509Certificate(socket.getPeerCertificate().raw).subjectAltName).toBe('DNS:*.example.com, DNS:example.com');
  });

  /** Debian's ssh through the edge (openssl s_client as its ProxyCommand), no key: only a refusal can come back before authentication. */
  const sshThroughEdge = (name: string) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const proxy = `openssl s_client -quiet -connect 127.0.0.1:${arbor.edge.tlsPort} -servername ${name}`;
      const options = ['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', `ProxyCommand=${proxy}`];
      execFile('ssh', [...options, `root@${name}`, 'true'], { timeout: 20_000 }, (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }));
    });

  it('refuses with the reason: a missing VM (404), a paused one (503, an ssh client told why), a closed port (502), an unknown name (TLS alert)', async () => {
    const { vm_id, name } = await bootVmWithServices();
    const missing = `${crypto.randomUUID()}.vm.${DOMAIN}`;
    expect(await https(missing, missing)).toEqual({ status: 404, body: expect.stringMatching(/^vm .* does not exist\n$/) });
    expect((await http('nobody.example.org')).status).toBe(404);
    expect((await http('nobody.example.org')).body).toBe('no VM has the domain nobody.example.org\n');
    const closedPort = await https(name, `${name}:9999`);
    expect(closedPort.status).toBe(502);
    expect(closedPort.body).toMatch(/nothing listens on port 9999 of vm/);

    expect((await arbor.request('PATCH', `/api/v1/vm/${vm_id}/state`, { body: { state: 'Paused' } })).status).toBe(200);
    const paused = await https(name, name);
    expect(paused.status).toBe(503);
    expect(paused.body).toContain(`is paused: resume it (PATCH /api/v1/vm/${vm_id}/state {"state":"Running"})`);
    // A real ssh client, as the README's ProxyCommand runs it, is told why before the connection ends.
    const refused = await sshThroughEdge(name);
    expect(refused.code).toBe(255);
    expect(refused.stderr).toContain(`Received disconnect from UNKNOWN port 65535:7: vm ${vm_id} is paused: resume it (PATCH /api/v1/vm/${vm_id}/state {"state":"Running"}) and connect again`);
    expect(logged).toContainEqual(expect.objectContaining({ level: 'info', msg: expect.stringMatching(new RegExp(`^edge: refused an SSH connection \\(503\\): vm ${vm_id} is paused`)) }));
    // A missing VM likewise.
    expect((await sshThroughEdge(missing)).stderr).toMatch(/Received disconnect from .*:7: vm .* does not exist/);
    expect((await arbor.request('PATCH', `/api/v1/vm/${vm_id}/state`, { body: { state: 'Running' } })).status).toBe(200);
    expect((await https(name, name)).status).toBe(200);

    await expect(tls(`not-a-vm.vm.${DOMAIN}`)).rejects.toThrow(/unrecognized name/i);
    await expect(tls('unknown.example.net', { ca })).rejects.toThrow(/unrecognized name|ECONNRESET|socket disconnected/i);
  });

  it("a VM's deletion ends its open connections at once and refuses new ones; a domain's removal likewise", async () => {
    const { vm_id, name, vm } = await bootVmWithServices();
    const domain = `gone-${vm_id.slice(0, 8)}.example.com`;
    const added = (await arbor.request('POST', '/api/v1/domains', { body: { vm_id, domain } })).json;
    const viaDomain = netConnect({ host: '127.0.0.1', port: arbor.edge.httpPort! });
    viaDomain.write(`GET / HTTP/1.1\r\nhost: ${domain}\r\n\r\n`);
    await readUntil(viaDomain, /"port":80/);
    expect((await arbor.request('DELETE', `/api/v1/domains/${added.domain_id}`)).status).toBe(200);
    await closed(viaDomain);
    expect((await http(domain)).status).toBe(404);

    const ssh = await tls(name);
    await readUntil(ssh, /SSH-2\.0/);
    await pollUntil(async () => vm.connections > 0);
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm_id}`)).status).toBe(200);
    // Closed on VmDeletionRequested, before the deletion even answers: within a second at the most.
    await Promise.race([closed(ssh), new Promise((_, reject) => setTimeout(() => reject(new Error('still open a second after the deletion')), 1000))]);
    await pollUntil(async () => vm.connections === 0, { timeoutMs: 1000 });
    expect((await https(name, name)).status).toBe(404);
    expect(arbor.edge.openConnections).toBe(0);
  });
});
