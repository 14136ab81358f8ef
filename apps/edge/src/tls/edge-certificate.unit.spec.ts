import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEdgeSettings } from '@arbor/application';
import { createEdgeCa, issueWildcardCertificate } from './edge-ca';
import { loadEdgeCertificate } from './edge-certificate';

describe("the edge's certificate", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'arbor-edge-cert-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const settings = loadEdgeSettings({ ARBOR_EDGE_DOMAIN: 'example.org' });
  const leafOf = (chain: string) => new X509Certificate(chain.slice(0, chain.indexOf('-----END CERTIFICATE-----') + 25));
  const caOf = (chain: string) => new X509Certificate(chain.slice(chain.lastIndexOf('-----BEGIN CERTIFICATE-----')));

  it('makes one CA at first start, however many edges start at once, and keeps it', async () => {
    const [a, b] = await Promise.all([loadEdgeCertificate(settings, dir), loadEdgeCertificate(settings, dir)]);
    const ca = caOf(a.cert);
    expect(caOf(b.cert).fingerprint256).toBe(ca.fingerprint256);
    expect(leafOf(b.cert).checkIssued(ca)).toBe(true);
    expect(leafOf(a.cert).checkIssued(ca)).toBe(true);
    const again = await loadEdgeCertificate(settings, dir);
    expect(again.cert).toBe((await loadEdgeCertificate(settings, dir)).cert);
    expect(again.caFile).toBe(join(dir, 'edge', 'ca-vm.example.org.crt'));
  });

  it('issues the server certificate again, from the same CA, 30 days before it expires', async () => {
    const first = await loadEdgeCertificate(settings, dir);
    const inAYear = new Date(Date.now() + 370 * 86_400_000);
    const renewed = await loadEdgeCertificate(settings, dir, inAYear);
    expect(renewed.cert).not.toBe(first.cert);
    expect(renewed.validTo.getTime()).toBeGreaterThan(first.validTo.getTime());
    expect(renewed.caFile).toBe(first.caFile);
    expect(caOf(renewed.cert).fingerprint256).toBe(caOf(first.cert).fingerprint256);
  });

  it("uses the operator's certificate when it covers *.vm.<domain>, and says so when it does not", async () => {
    const ca = await createEdgeCa('vm.example.org');
    const good = await issueWildcardCertificate(ca, 'vm.example.org');
    writeFileSync(join(dir, 'cert.pem'), good.cert);
    writeFileSync(join(dir, 'key.pem'), good.key);
    const given = loadEdgeSettings({ ARBOR_EDGE_DOMAIN: 'example.org', ARBOR_EDGE_TLS_CERT: join(dir, 'cert.pem'), ARBOR_EDGE_TLS_KEY: join(dir, 'key.pem') });
    expect(await loadEdgeCertificate(given, dir)).toMatchObject({ cert: good.cert, key: good.key, caFile: null });
    const elsewhere = loadEdgeSettings({ ...{ ARBOR_EDGE_TLS_CERT: join(dir, 'cert.pem'), ARBOR_EDGE_TLS_KEY: join(dir, 'key.pem') }, ARBOR_EDGE_DOMAIN: 'other.net' });
    await expect(loadEdgeCertificate(elsewhere, dir)).rejects.toThrow(/does not cover \*\.vm\.other\.net/);
    expect(() => loadEdgeSettings({ ARBOR_EDGE_TLS_CERT: 'x.pem' })).toThrow(/go together/);
  });
});
