import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EdgeSettings } from '@arbor/application';
import { writeFileAtomic } from '@arbor/durable-files';
import { createEdgeCa, issueWildcardCertificate, type KeyPair, stillGood } from './edge-ca';

/** The certificate the edge serves for `*.vm.<domain>`, where it came from and until when. */
export interface EdgeCertificate extends KeyPair {
  /** The CA certificate to trust (Arbor's own CA), or null for an operator's certificate. */
  caFile: string | null;
  validTo: Date;
}

/** A certificate of Arbor's CA is issued again once it has less than this left. */
export const RENEW_BEFORE_MS = 30 * 86_400_000;

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/;

/** Reads a key and certificate kept together in one PEM file (one file, so one atomic write). */
function splitPem(pem: string): KeyPair | null {
  const key = PEM_KEY.exec(pem)?.[0];
  const cert = pem.match(PEM_CERT)?.join('');
  return key && cert ? { key, cert } : null;
}

async function readPair(path: string): Promise<KeyPair | null> {
  try {
    return splitPem(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * The edge's certificate: the operator's (ARBOR_EDGE_TLS_CERT/_KEY), or one issued by Arbor's
 * own CA, made at first start in `<data dir>/edge/` and kept there: `ca-<vm domain>.crt` is the
 * certificate users trust, `ca-<vm domain>.pem` its key (0600), `<vm domain>.pem` the server's
 * key and certificate (0600), issued again when it has less than 30 days left. Every file is
 * written atomically, and a new one only if absent, so edges starting together on one data
 * directory end up with one CA.
 */
export async function loadEdgeCertificate(settings: EdgeSettings, dataDir: string, now = new Date()): Promise<EdgeCertificate> {
  const vmDomain = `vm.${settings.domain}`;
  if (settings.certFile && settings.keyFile) {
    const [cert, key] = await Promise.all([readFile(settings.certFile, 'utf8'), readFile(settings.keyFile, 'utf8')]);
    const parsed = new X509Certificate(cert);
    if (parsed.checkHost(`probe.${vmDomain}`) === undefined) {
      throw new Error(`ARBOR_EDGE_TLS_CERT (${settings.certFile}) does not cover *.${vmDomain} (its names: ${parsed.subjectAltName ?? parsed.subject})`);
    }
    return { cert, key, caFile: null, validTo: new Date(parsed.validTo) };
  }
  const dir = join(dataDir, 'edge');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const caKeyFile = join(dir, `ca-${vmDomain}.pem`);
  const caFile = join(dir, `ca-${vmDomain}.crt`);
  const leafFile = join(dir, `${vmDomain}.pem`);

  let ca = await readPair(caKeyFile);
  if (!ca) {
    const made = await createEdgeCa(vmDomain, now);
    await writeFileAtomic(caKeyFile, made.key + made.cert, { mode: 0o600, ifAbsent: true });
    ca = (await readPair(caKeyFile))!;
  }
  if ((await readFile(caFile, 'utf8').catch(() => null)) !== ca.cert) await writeFileAtomic(caFile, ca.cert, { mode: 0o644 });

  let leaf = await readPair(leafFile);
  if (!leaf || !stillGood(leaf, ca, vmDomain, new Date(now.getTime() + RENEW_BEFORE_MS))) {
    leaf = await issueWildcardCertificate(ca, vmDomain, now);
    await writeFileAtomic(leafFile, leaf.key + leaf.cert, { mode: 0o600 });
  }
  // The chain the edge serves: its certificate, then the CA's, so a client that trusts the CA can build it.
  return { key: leaf.key, cert: leaf.cert + ca.cert, caFile, validTo: new Date(new X509Certificate(leaf.cert).validTo) };
}
