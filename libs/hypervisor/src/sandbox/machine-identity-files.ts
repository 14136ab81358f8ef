import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineSpec } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from '../guest-environment';
import { newOpenSshHostKey } from '../host/openssh-key';
import { shiftIntoGuestRange } from './guest-ids';

/** The machine's hostname, as its spec names it. */
export function hostnameOf(spec: MachineSpec): string {
  return spec.identity.hostname;
}

/** Directories of the identity layer with Debian's usual modes (they shadow the ones below). */
const DIRECTORIES: Array<[path: string, mode: number]> = [
  ['etc', 0o755],
  ['etc/ssh', 0o755],
  ['etc/arbor', 0o755],
  ['root', 0o700],
  ['root/.ssh', 0o700],
];

/**
 * Writes who the machine is into `layerDir`, a fresh directory that becomes the topmost read-only
 * layer of its root: hostname, a new /etc/machine-id, /etc/environment, a new SSH host key and the
 * authorized key. A layer of its own (rather than writes into the merged root) because a root
 * started from a snapshot is guest-made: a symlink planted there must never steer a host-side
 * write, and here every path is a directory the driver just created. The layer is left out of
 * snapshots, so every machine started from one gets its own identity on top.
 *
 * The guest kit's sshd (kit/kit-files.ts) serves with this host key and lets root in with the
 * authorized key. The host key is made in-process (newOpenSshHostKey: OpenSSH's own file format,
 * no `ssh-keygen` process per machine). The guest clock is the host's (shared kernel), so it
 * needs no reset.
 */
export async function writeIdentityLayer(layerDir: string, spec: MachineSpec): Promise<void> {
  for (const [path, mode] of DIRECTORIES) {
    await mkdir(join(layerDir, path), { recursive: true });
    await chmod(join(layerDir, path), mode); // mkdir's mode is filtered by the umask
  }
  for (const [path, content, mode] of ownedFiles(spec)) {
    await writeFile(join(layerDir, path), content, { mode });
    await chmod(join(layerDir, path), mode);
  }
  await writeFile(join(layerDir, 'etc/machine-id'), `${randomBytes(16).toString('hex')}\n`, { mode: 0o444 });
  await chmod(join(layerDir, 'etc/machine-id'), 0o444);
  const hostKey = newOpenSshHostKey(`root@${hostnameOf(spec)}`);
  await writeFile(join(layerDir, 'etc/ssh/ssh_host_ed25519_key'), hostKey.privateKey, { mode: 0o600 });
  await writeFile(join(layerDir, 'etc/ssh/ssh_host_ed25519_key.pub'), `${hostKey.publicKey}\n`, { mode: 0o644 });
  // Written by host root, owned by guest root (and the modes above kept).
  await shiftIntoGuestRange(layerDir);
}

/**
 * The identity files that say whose the machine is, with their modes: hostname, environment, spec
 * and authorized key (the machine id and host key are the machine's own, whoever it serves).
 * The authorized keys file is always written, empty without a key: a key authorized in the
 * snapshot's source must not carry over.
 */
function ownedFiles(spec: MachineSpec): [path: string, content: string, mode: number][] {
  const authorized = spec.identity.ssh_authorized_key;
  return [
    ['etc/hostname', `${hostnameOf(spec)}\n`, 0o644],
    ['etc/environment', formatEnvironmentFile(spec.env), 0o644],
    ['etc/arbor/spec.json', `${JSON.stringify(spec, null, 2)}\n`, 0o644],
    ['root/.ssh/authorized_keys', authorized ? `${authorized.trim()}\n` : '', 0o600],
  ];
}

/**
 * Makes a booted machine's identity layer `spec`'s (a warm machine claimed by a VM: warm-pool.ts):
 * the files of ownedFiles rewritten in place, each the same inode, owner and mode, since the
 * layer is a lower layer of the running machine's root and overlayfs reads such a file through to
 * its inode (a new inode would go unseen behind a lookup already made). Only for a layer nothing
 * in the machine has written over (a warm machine runs no one's code), and only files the layer
 * already has (the host made every path in it; nothing of a guest's steers the writes).
 */
export async function rewriteIdentityLayer(layerDir: string, spec: MachineSpec): Promise<void> {
  // Synchronous: four small writes to the page cache, which Node's thread pool, busy with fsyncs
  // when many machines are made at once, would otherwise hold up for a good part of a claim.
  for (const [path, content] of ownedFiles(spec)) {
    const fd = openSync(join(layerDir, path), constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW);
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
  }
}
