import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from './run-command';

/**
 * A fresh ed25519 SSH host key pair in OpenSSH's formats, made by the host's ssh-keygen (the
 * reference implementation of the format) in a private scratch directory that is gone afterwards.
 */
export async function newSshHostKey(comment: string): Promise<{ privateKey: string; publicKey: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'arbor-host-key-'));
  try {
    const file = join(dir, 'key');
    await runCommand('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
    return { privateKey: await readFile(file, 'utf8'), publicKey: (await readFile(`${file}.pub`, 'utf8')).trim() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
