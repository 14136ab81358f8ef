import 'reflect-metadata'; // @peculiar/x509 resolves its parts through tsyringe, which needs it
import { webcrypto, X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { GeneralName, GeneralSubtree, GeneralSubtrees, id_ce_nameConstraints, NameConstraints } from '@peculiar/asn1-x509';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;
/** A CA lives ten years; the certificate it issues 397 days (what browsers accept of any server certificate). */
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 397;

/** A key and its certificate, PEM. */
export interface KeyPair {
  key: string;
  cert: string;
}

async function exportKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f; // positive
  return Buffer.from(bytes).toString('hex');
}

/**
 * A CA for the edge, made at first start: ECDSA P-256, and **name-constrained to `vmDomain`**, so
 * a user who trusts it trusts it for the VMs' names only: its key, were it stolen, could not sign
 * for any other site.
 */
export async function createEdgeCa(vmDomain: string, now = new Date()): Promise<KeyPair> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const permitted = new NameConstraints({ permittedSubtrees: new GeneralSubtrees([new GeneralSubtree({ base: new GeneralName({ dNSName: vmDomain }) })]) });
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=Arbor edge CA for ${vmDomain}, O=Arbor`,
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + CA_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      new x509.Extension(id_ce_nameConstraints, true, AsnConvert.serialize(permitted)),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { key: await exportKey(keys.privateKey), cert: cert.toString('pem') };
}

/** The edge's server certificate for `*.<vmDomain>` (and `<vmDomain>`), issued by the CA. */
export async function issueWildcardCertificate(ca: KeyPair, vmDomain: string, now = new Date()): Promise<KeyPair> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.key), ALGORITHM, false, ['sign']);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=*.${vmDomain}`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + LEAF_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: `*.${vmDomain}` },
        { type: 'dns', value: vmDomain },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { key: await exportKey(keys.privateKey), cert: `${cert.toString('pem')}\n` };
}

/** True when `leaf` was issued by `ca`, covers the VMs' names and stays valid past `renewBefore`. */
export function stillGood(leaf: KeyPair, ca: KeyPair | null, vmDomain: string, renewBefore: Date): boolean {
  try {
    const cert = new X509Certificate(leaf.cert);
    if (new Date(cert.validTo) <= renewBefore) return false;
    if (cert.checkHost(`probe.${vmDomain}`) === undefined) return false;
    return ca === null || cert.verify(new X509Certificate(ca.cert).publicKey);
  } catch {
    return false;
  }
}
