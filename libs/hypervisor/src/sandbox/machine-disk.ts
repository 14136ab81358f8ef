import { chmod, mkdir, readFile, realpath, truncate, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { mountTable } from '../host/host-mounts';
import { runCommand } from '../host/run-command';
import { sleep } from '../host/sleep';
import { HOST_SIDE_OPTIONS } from './overlay-root';

const MIB = 1024 * 1024;
/** Below this, btrfs needs mixed data/metadata block groups (separate ones need ~114 MiB). */
const MIXED_MODE_BELOW_MIB = 256;

/**
 * A machine's disk: a sparse image file of fs_size_mib, formatted btrfs and loop-mounted, that
 * holds the machine's writable overlay layer. overlayfs reports its upper filesystem to statfs, so
 * `df /` in the machine shows this size.
 *
 * Why btrfs and not ext4: growing a mounted ext4 needs CAP_SYS_RESOURCE, which root on these hosts
 * lacks (resize2fs: "Permission denied"); btrfs grows online with CAP_SYS_ADMIN. mkfs + mount take
 * ~25 ms. The loop device is set up with autoclear (mount -o loop), so it goes away with the last
 * mount of the filesystem, which the machine's own mount namespace also holds until its init dies.
 */
export async function createMachineDisk(image: string, mountPoint: string, sizeMib: number): Promise<void> {
  await writeFile(image, '', { mode: 0o600 });
  await truncate(image, sizeMib * MIB);
  const mixed = sizeMib < MIXED_MODE_BELOW_MIB ? ['--mixed'] : [];
  await runCommand('mkfs.btrfs', ['-q', ...mixed, image]);
  await mkdir(mountPoint, { recursive: true });
  // The host never runs, opens devices or honours setuid bits from a guest's disk.
  await runCommand('mount', ['-o', `loop,${HOST_SIDE_OPTIONS}`, image, mountPoint]);
  await chmod(mountPoint, 0o700); // the file system's root: host root's alone, as the rest of the machine directory

}

/** Grows the mounted disk in place: a bigger file, the loop device told so, then btrfs told so. */
export async function growMachineDisk(image: string, mountPoint: string, sizeMib: number): Promise<void> {
  await truncate(image, sizeMib * MIB);
  const device = (await runCommand('findmnt', ['--noheadings', '--output', 'SOURCE', '--mountpoint', mountPoint])).trim();
  if (!device.startsWith('/dev/loop')) throw new Error(`disk of ${mountPoint} is not mounted (found "${device}")`);
  await runCommand('losetup', ['--set-capacity', device]);
  await runCommand('btrfs', ['-q', 'filesystem', 'resize', 'max', mountPoint]);
}

/** Loop devices still backed by `image` (none once every mount of it is gone). */
export async function loopDevicesOf(image: string): Promise<string[]> {
  const out = await runCommand('losetup', ['--noheadings', '--output', 'NAME', '--associated', image]).catch(() => '');
  return out.split('\n').map((line) => line.trim()).filter(Boolean);
}

/** The loop device the disk at `mountPoint` is mounted from (`/dev/loopN`), if it is mounted from one. */
export async function diskDeviceOf(mountPoint: string): Promise<string | null> {
  const entry = (await mountTable()).find((mount) => mount.point === mountPoint);
  return entry && /^\/dev\/loop\d+$/.test(entry.source) ? entry.source : null;
}

/** Whether loop device `device` (`/dev/loopN`) is still backed by `image` (sysfs: no process to run). */
async function stillBacks(device: string, image: string): Promise<boolean> {
  const backing = await readFile(`/sys/block/${basename(device)}/loop/backing_file`, 'utf8').catch(() => null);
  return backing !== null && backing.trim() === image;
}

/**
 * Waits for the autoclear detach after the last unmount (the kernel may finish it a moment later),
 * then detaches whatever is left by hand, e.g. after a crash between losetup and mount. `device`,
 * the loop device the disk was mounted from (diskDeviceOf, before the unmount), is watched in
 * sysfs first; losetup then makes sure no other device holds the image.
 */
export async function releaseMachineDisk(image: string, device: string | null = null): Promise<void> {
  if (device) {
    // sysfs names the file by its real path.
    const real = await realpath(image).catch(() => image);
    for (let attempt = 0; attempt < 50 && (await stillBacks(device, real)); attempt++) await sleep(20);
    if (!(await stillBacks(device, real))) return;
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    if ((await loopDevicesOf(image)).length === 0) return;
    await sleep(20);
  }
  for (const device of await loopDevicesOf(image)) await runCommand('losetup', ['--detach', device]).catch(() => undefined);
  const left = await loopDevicesOf(image);
  if (left.length > 0) throw new Error(`loop device(s) ${left.join(', ')} still hold ${image}`);
}
