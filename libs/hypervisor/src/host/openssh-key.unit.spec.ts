import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKey, parsePrivateKey } from 'sshpk';
import { newOpenSshHostKey } from './openssh-key';

describe('newOpenSshHostKey', () => {
  it('writes a key OpenSSH reads back, whose public half is the line it gives', () => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-key-'));
    try {
      const { privateKey, publicKey } = newOpenSshHostKey('root@vm-1');
      expect(privateKey.split('\n')[0]).toBe('-----BEGIN OPENSSH PRIVATE KEY-----');
      const file = join(dir, 'key');
      writeFileSync(file, privateKey, { mode: 0o600 });
      // ssh-keygen derives the public key from the private file (and refuses a malformed one).
      const derived = execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
      expect(`${derived.split(' ').slice(0, 2).join(' ')} root@vm-1`).toBe(publicKey);
      // And a second reader (sshpk) agrees.
      expect(parsePrivateKey(privateKey, 'openssh').toPublic().fingerprint('sha256').toString()).toBe(parseKey(publicKey, 'ssh').fingerprint('sha256').toString());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes a new key every time', () => {
    const keys = new Set(Array.from({ length: 20 }, () => newOpenSshHostKey('x').publicKey));
    expect(keys.size).toBe(20);
  });
});
