import { generateKeyPairSync } from 'node:crypto';
import { parseKey } from 'sshpk';

/** A fresh Ed25519 public key in OpenSSH form (`ssh-ed25519 AAAA… comment`), as ~/.ssh/id_ed25519.pub holds it. */
export function newSshPublicKey(comment = 'test@laptop'): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = parseKey(publicKey.export({ type: 'spki', format: 'pem' }) as string, 'pem');
  key.comment = comment;
  return key.toString('ssh');
}
