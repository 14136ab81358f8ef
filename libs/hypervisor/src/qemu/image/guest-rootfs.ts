import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand, runStreamingLines } from '../../host/run-command';
import { configureSshd } from '../../guest-ssh';
import { KIT_MOUNT } from '../../kit/kit-paths';

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
/**
 * What the default image offers its users beyond minbase: the guest kit (/.arbor) runs the machine
 * whatever the image holds, so these are the familiar tools of a Debian machine (its own sshd,
 * qemu-ga, resize2fs, ip and hwclock), not what Arbor relies on.
 */
const PACKAGES = ['qemu-guest-agent', 'e2fsprogs', 'openssh-server', 'iproute2', 'util-linux-extra'];

/**
 * A minimal Debian root (debootstrap minbase) with the mount point of the guest kit, which boots
 * it (kit/kit-files.ts). Host keys and machine-id are removed: every machine gets its own through
 * the agent after boot.
 */
export async function buildGuestRootfs(root: string, log: (line: string) => void): Promise<void> {
  log(`qemu image: debootstrap --variant=minbase --include=${PACKAGES.join(',')} ${SUITE}`);
  await runStreamingLines(
    'debootstrap',
    ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, root, MIRROR],
    (line) => log(`debootstrap: ${line}`),
  );
  await mkdir(join(root, KIT_MOUNT.slice(1)), { mode: 0o755 });
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
