import { generateKeyPairSync, randomBytes } from 'node:crypto';

/** An SSH host key pair in the files sshd reads: the private key in OpenSSH's format, the public one as a line. */
export interface OpenSshKeyPair {
  /** `-----BEGIN OPENSSH PRIVATE KEY-----` …, unencrypted (what `ssh-keygen -N ''` writes). */
  privateKey: string;
  /** `ssh-ed25519 AAAA… <comment>` */
  publicKey: string;
}

/** SSH wire format: a string is its length (uint32, big-endian), then its bytes. */
function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

/**
 * A new Ed25519 host key, made by Node's crypto (OpenSSL) and written in the format `ssh-keygen
 * -t ed25519 -N ''` writes (PROTOCOL.key of OpenSSH: "openssh-key-v1", no cipher, one key, the
 * private section padded to 8 bytes). In-process, it costs a fraction of a millisecond; a
 * `ssh-keygen` process costs tens on a loaded host, and one ran for every new machine. (sshpk,
 * which the project uses to parse keys, can write the format too, but derives through its own
 * JavaScript curve code: about 8 ms of CPU a key here.)
 */
export function newOpenSshHostKey(comment: string): OpenSshKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const type = 'ssh-ed25519';
  const publicBlob = Buffer.concat([sshString(type), sshString(pub)]);
  const check = randomBytes(4).readUInt32BE();
  let secret = Buffer.concat([uint32(check), uint32(check), sshString(type), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString(comment)]);
  const padding = Buffer.from(Array.from({ length: (8 - (secret.length % 8)) % 8 }, (_, index) => index + 1));
  secret = Buffer.concat([secret, padding]);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0'), sshString('none'), sshString('none'), sshString(''), uint32(1), sshString(publicBlob), sshString(secret)]);
  const lines = body.toString('base64').match(/.{1,70}/g)!;
  return {
    privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`,
    publicKey: `${type} ${publicBlob.toString('base64')} ${comment}`,
  };
}
