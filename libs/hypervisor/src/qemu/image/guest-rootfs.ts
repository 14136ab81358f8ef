import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand, runStreamingLines } from '../../host/run-command';
import { configureSshd } from '../../guest-ssh';
import { GUEST_INIT } from './guest-init-scripts';

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
/**
 * qemu-guest-agent runs everything; e2fsprogs grows the disk; openssh-server is the machine's SSH
 * server (guest-ssh.ts); iproute2 configures its network (the driver, through the agent);
 * util-linux-extra has the hwclock that guest-set-time calls.
 */
const PACKAGES = ['qemu-guest-agent', 'e2fsprogs', 'openssh-server', 'iproute2', 'util-linux-extra'];

/**
 * A minimal Debian root (debootstrap minbase) with the guest agent and Arbor's small init. Host
 * keys and machine-id are removed: every machine gets its own through the agent after boot.
 */
export async function buildGuestRootfs(root: string, log: (line: string) => void): Promise<void> {
  log(`qemu image: debootstrap --variant=minbase --include=${PACKAGES.join(',')} ${SUITE}`);
  await runStreamingLines(
    'debootstrap',
    ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, root, MIRROR],
    (line) => log(`debootstrap: ${line}`),
  );
  await writeFile(join(root, 'sbin/arbor-init'), GUEST_INIT, { mode: 0o755 });
  await writeFile(join(root, 'etc/hostname'), 'arbor\n');
  await writeFile(join(root, 'etc/machine-id'), '');
  await writeFile(join(root, 'etc/fstab'), '/dev/vda / ext4 rw,relatime 0 1\n');
  await configureSshd(root);
  await rm(join(root, 'var/cache/apt/archives'), { recursive: true, force: true });
  await mkdir(join(root, 'var/cache/apt/archives/partial'), { recursive: true });
  await rm(join(root, 'var/lib/apt/lists'), { recursive: true, force: true });
  await mkdir(join(root, 'var/lib/apt/lists/partial'), { recursive: true });
  await mkdir(join(root, 'root/.ssh'), { recursive: true, mode: 0o700 });
}

/**
 * Packs the root into an ext4 file system image (`mkfs.ext4 -d`, no loop mount needed) with room to
 * spare, then converts it to qcow2: the read-only base every machine's overlay starts from.
 */
export async function packRootDisk(root: string, workDir: string, output: string): Promise<number> {
  const usedMib = Number((await runCommand('du', ['-sm', '--apparent-size', root])).split(/\s/)[0]);
  const sizeMib = Math.max(512, Math.ceil((usedMib * 1.3 + 128) / 64) * 64);
  const raw = join(workDir, 'root.ext4');
  await runCommand('mkfs.ext4', ['-q', '-F', '-L', 'arbor-root', '-d', root, raw, `${sizeMib}M`]);
  await runCommand('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, output]);
  await rm(raw, { force: true });
  return sizeMib;
}
