import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createSign, randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRegistry {
  /** host:port, on 127.0.0.1: an "insecure" (plain HTTP) registry. */
  host: string;
  /** With token auth: who may push (`user:password` for skopeo's --dest-creds); pulls are anonymous. */
  pushCredentials: string | null;
  /** Token requests the token service answered (with token auth). */
  tokenRequests: { scope: string | null; authenticated: boolean }[];
  stop(): Promise<void>;
}

/**
 * Debian's `docker-registry` (the reference registry, distribution 2.8) on a free loopback port,
 * its storage in a temporary directory. With `tokenAuth` it asks every client for a bearer token
 * from a token service the test runs (ES256 JWTs, signed with a key whose certificate the
 * registry trusts): anonymous clients get pull tokens, the push credentials pull and push ones,
 * as Docker Hub and most registries behave.
 */
export async function startTestRegistry(options: { tokenAuth?: boolean } = {}): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-registry-'));
  const port = await freePort();
  const tokenRequests: TestRegistry['tokenRequests'] = [];
  let tokens: Server | null = null;
  let auth = '';
  const pushCredentials = options.tokenAuth ? 'pusher:push-secret' : null;
  if (options.tokenAuth) {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'token.key'), '-out', join(dir, 'token.crt'), '-subj', '/CN=arbor-test-token', '-days', '2'], { stdio: 'ignore' });
    const key = readFileSync(join(dir, 'token.key'), 'utf8');
    const certificate = new X509Certificate(readFileSync(join(dir, 'token.crt')));
    tokens = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const scope = url.searchParams.get('scope');
      const basic = request.headers.authorization?.startsWith('Basic ') ? Buffer.from(request.headers.authorization.slice(6), 'base64').toString() : null;
      const authenticated = basic === pushCredentials;
      tokenRequests.push({ scope, authenticated });
      const access = scope
        ? scope.split(' ').map((one) => {
            const [type, name, actions] = one.split(':');
            const wanted = actions.split(',');
            return { type, name, actions: wanted.filter((action) => action === 'pull' || authenticated) };
          })
        : [];
      const token = signJwt(key, certificate, {
        iss: 'arbor-test-issuer',
        sub: authenticated ? 'pusher' : '',
        aud: 'arbor-test-registry',
        exp: Math.floor(Date.now() / 1000) + 600,
        nbf: Math.floor(Date.now() / 1000) - 60,
        iat: Math.floor(Date.now() / 1000),
        jti: randomUUID(),
        access,
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, expires_in: 600 }));
    });
    await new Promise<void>((resolve) => tokens!.listen(0, '127.0.0.1', resolve));
    const tokenPort = (tokens.address() as AddressInfo).port;
    auth = `auth:
  token:
    realm: http://127.0.0.1:${tokenPort}/token
    service: arbor-test-registry
    issuer: arbor-test-issuer
    rootcertbundle: ${join(dir, 'token.crt')}
`;
  }
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: ${join(dir, 'storage')}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:${port}
${auth}`,
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const host = `127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await fetch(`http://${host}/v2/`).then((response) => response.status, () => null);
    if (answer === 200 || answer === 401) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`docker-registry did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    host,
    pushCredentials,
    tokenRequests,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await new Promise<void>((resolve) => (tokens ? tokens.close(() => resolve()) : resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function signJwt(privateKey: string, certificate: X509Certificate, claims: object): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = { alg: 'ES256', typ: 'JWT', x5c: [certificate.raw.toString('base64')] };
  const signingInput = `${encode(header)}.${encode(claims)}`;
  const signature = createSign('SHA256').update(signingInput).sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** A loopback port nobody listens on now (not processes.ts's: the benchmarks, built without jest, use this file). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createTcpServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
