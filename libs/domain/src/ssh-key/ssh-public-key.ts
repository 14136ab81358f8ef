import { createHash } from 'node:crypto';
import { parseKey } from 'sshpk';
import { invalid } from '../shared/domain-error';

/** An OpenSSH public key as Arbor keeps it: comment dropped, fingerprinted as `ssh-keygen -l` shows it. */
export interface SshPublicKey {
  /** `<type> <base64>`, without the comment. */
  public_key: string;
  /** `SHA256:<base64>`, what `ssh-keygen -lf key.pub` prints. */
  fingerprint: string;
  /** The same SHA-256 in hex: names the key's stream. */
  fingerprint_hex: string;
}

const MAX_LENGTH = 16 * 1024;
/** Key types accepted, and the least size of each (RSA below 2048 bits is refused as weak; DSA altogether). */
const MIN_BITS: Record<string, number> = { ed25519: 256, ecdsa: 256, rsa: 2048 };

/**
 * One OpenSSH public key line (`ssh-ed25519 AAAA… comment`), parsed by sshpk (it checks the blob
 * is a key of the type it names), or a 400 that says what is wrong.
 */
export function parseSshPublicKey(raw: unknown): SshPublicKey {
  if (typeof raw !== 'string' || !raw.trim()) throw invalid('ssh_public_key is required');
  const line = raw.trim();
  if (line.length > MAX_LENGTH || /[\r\n]/.test(line)) throw invalid('ssh_public_key must be one OpenSSH public key line (`ssh-ed25519 AAAA… comment`)');
  let key;
  try {
    key = parseKey(line, 'ssh');
  } catch {
    throw invalid('ssh_public_key is not an OpenSSH public key (expected `ssh-ed25519 AAAA… comment`, as in ~/.ssh/id_ed25519.pub)');
  }
  const least = MIN_BITS[key.type];
  if (least === undefined) throw invalid(`ssh_public_key: ${key.type} keys are not accepted (use ed25519, ecdsa or rsa)`);
  if (key.size < least) throw invalid(`ssh_public_key: a ${key.type} key of ${key.size} bits is too weak (at least ${least})`);
  const blob = key.toBuffer('rfc4253');
  const digest = createHash('sha256').update(blob).digest();
  return {
    public_key: key.toString('ssh').split(' ').slice(0, 2).join(' '),
    fingerprint: `SHA256:${digest.toString('base64').replace(/=+$/, '')}`,
    fingerprint_hex: digest.toString('hex'),
  };
}
