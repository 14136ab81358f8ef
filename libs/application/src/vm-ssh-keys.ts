import { createHmac, createPrivateKey, createPublicKey } from 'node:crypto';
import type { SshKeyGenerations } from './secrets/ssh-key-generations';

/** PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const KEY_TYPE = 'ssh-ed25519';

/**
 * Every VM's own Ed25519 key pair, derived from a server secret and the VM id
 * (seed = HMAC-SHA256(secret, vm_id)), so no private key is ever stored, in the log or elsewhere:
 * the public half goes into VmCreationRequested, the private half is computed on demand.
 *
 * The secret is one of the SSH key generations (SshKeyGenerations): a new VM's key comes from the
 * current one, and the VM's events record which, so a rotation changes no existing VM's key.
 */
export class VmSshKeys {
  constructor(private readonly generations: SshKeyGenerations) {}

  /** The key pair a new VM gets: the current generation's. */
  async forNewVm(vm_id: string): Promise<{ ssh_public_key: string; ssh_key_generation: number }> {
    const { generation, secret } = await this.generations.current();
    return { ssh_public_key: publicKeyLine(secret, vm_id), ssh_key_generation: generation };
  }

  /** One OpenSSH line: `ssh-ed25519 AAAA… arbor-vm-<id>`, for authorized_keys. SshKeyGenerationRetired once retired. */
  async publicKey(vm_id: string, generation: number): Promise<string> {
    return publicKeyLine(await this.generations.secret(generation), vm_id);
  }

  /** The private key as an unencrypted OpenSSH (openssh-key-v1) PEM block. SshKeyGenerationRetired once retired. */
  async privateKeyOpenSsh(vm_id: string, generation: number): Promise<string> {
    return privateKeyOpenSsh(await this.generations.secret(generation), vm_id);
  }
}

function publicKeyLine(secret: Buffer, vm_id: string): string {
  return `${KEY_TYPE} ${publicBlob(publicKeyBytes(secret, vm_id)).toString('base64')} ${comment(vm_id)}`;
}

function privateKeyOpenSsh(secret: Buffer, vm_id: string): string {
  const seed = seedOf(secret, vm_id);
  const publicKey = publicKeyBytes(secret, vm_id);
  // The check ints only let a decrypting reader notice a wrong passphrase; derived so output is stable.
  const check = seed.subarray(0, 4);
  const privateSection = Buffer.concat([
    check,
    check,
    sshString(KEY_TYPE),
    sshString(publicKey),
    sshString(Buffer.concat([seed, publicKey])),
    sshString(comment(vm_id)),
  ]);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0'),
    sshString('none'), // cipher
    sshString('none'), // kdf
    sshString(''), // kdf options
    uint32(1), // number of keys
    sshString(publicBlob(publicKey)),
    sshString(padToBlock(privateSection, 8)),
  ]);
  const lines = body.toString('base64').match(/.{1,70}/g)!;
  return ['-----BEGIN OPENSSH PRIVATE KEY-----', ...lines, '-----END OPENSSH PRIVATE KEY-----', ''].join('\n');
}

function seedOf(secret: Buffer, vm_id: string): Buffer {
  return createHmac('sha256', secret).update(vm_id).digest();
}

function publicKeyBytes(secret: Buffer, vm_id: string): Buffer {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seedOf(secret, vm_id)]), format: 'der', type: 'pkcs8' });
  return Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
}

const comment = (vm_id: string) => `arbor-vm-${vm_id}`;

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

/** The SSH wire format's string: a uint32 length, then the bytes. */
function sshString(value: string | Buffer): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([uint32(bytes.length), bytes]);
}

const publicBlob = (publicKey: Buffer) => Buffer.concat([sshString(KEY_TYPE), sshString(publicKey)]);

/** openssh-key-v1 pads the private section with 1, 2, 3, … to the cipher's block size. */
function padToBlock(section: Buffer, blockSize: number): Buffer {
  const padding = (blockSize - (section.length % blockSize)) % blockSize;
  return Buffer.concat([section, Buffer.from(Array.from({ length: padding }, (_, i) => i + 1))]);
}
