import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The default images' own OpenSSH server, which Arbor does not run: every machine's SSH server is
 * the guest kit's (kit/kit-files.ts), whatever its image. An image that installs openssh-server
 * still gets safe settings and no host key of its own, in case a user starts that sshd.
 */

/** Where the images put Arbor's sshd settings (Debian's sshd_config includes the directory first, and sshd keeps the first value it reads). */
export const SSHD_CONFIG_PATH = 'etc/ssh/sshd_config.d/arbor.conf';

export const SSHD_CONFIG = `# Arbor: root logs in with the VM's own key (GET /vm/{id}/ssh_key); no passwords.
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
HostKey /etc/ssh/ssh_host_ed25519_key
`;

/**
 * Makes a freshly bootstrapped root's sshd safe: Arbor's settings, and none of the host keys the
 * package made at install (every machine gets its own; a key in the image would be everyone's).
 */
export async function configureSshd(root: string): Promise<void> {
  await writeFile(join(root, SSHD_CONFIG_PATH), SSHD_CONFIG, { mode: 0o644 });
  for (const name of await readdir(join(root, 'etc/ssh'))) {
    if (name.startsWith('ssh_host_')) await rm(join(root, 'etc/ssh', name), { force: true });
  }
}
