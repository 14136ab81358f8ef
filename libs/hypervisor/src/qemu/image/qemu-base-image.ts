import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withHostLock } from '../../host/host-lock';
import { unmountAllUnder } from '../../host/host-mounts';
import { ensureKitDisk, kitDiskPath } from '../kit-disk';
import { fetchCloudKernel } from './guest-kernel';
import { buildGuestRootfs, packRootDisk } from './guest-rootfs';
import { buildInitramfs } from './initramfs';

/** Bump when the recipe changes: a new name means a fresh build next to the old one. */
const IMAGE_NAME = 'debian-bookworm-v3';

/**
 * The files of the built base image: Arbor's kernel and initramfs (which boot every machine, of
 * any image), the default image's root disk, and the guest kit's disk. The disks are never written
 * to: machines run on overlays.
 */
export interface QemuBaseImage {
  dir: string;
  kernel: string;
  initrd: string;
  disk: string;
  /** The current guest kit's disk (kit-disk.ts), attached read-only to every new machine. */
  kit_disk: string;
  /** Size of the base ext4 file system: the smallest disk a machine can have. */
  disk_size_mib: number;
  kernel_release: string;
}

export function qemuImageDir(cacheDir: string): string {
  return join(cacheDir, 'qemu', IMAGE_NAME);
}

/** The cached image with the current kit's disk, or null when either has not been built yet. */
export async function readQemuBaseImage(cacheDir: string): Promise<QemuBaseImage | null> {
  const dir = qemuImageDir(cacheDir);
  const text = await readFile(join(dir, 'image.json'), 'utf8').catch(() => null);
  const kit_disk = kitDiskPath(cacheDir);
  if (text === null || !existsSync(kit_disk)) return null;
  const meta = JSON.parse(text) as Pick<QemuBaseImage, 'disk_size_mib' | 'kernel_release'>;
  return { dir, kernel: join(dir, 'vmlinuz'), initrd: join(dir, 'initrd.img'), disk: join(dir, 'root.qcow2'), kit_disk, ...meta };
}

/**
 * Builds the base image once per host (kernel + initramfs + qcow2 root disk) with progress in
 * `log`. The build runs in a scratch directory renamed into place when complete, under a host-wide
 * lock, so readers never see half an image and two processes never build at once.
 */
export async function ensureQemuBaseImage(cacheDir: string, log: (line: string) => void): Promise<QemuBaseImage> {
  const cached = await readQemuBaseImage(cacheDir);
  if (cached) return cached;
  await ensureKitDisk(cacheDir, log);
  const target = qemuImageDir(cacheDir);
  await mkdir(join(cacheDir, 'qemu'), { recursive: true });
  await withHostLock(`${target}.lock`, async () => {
    if (existsSync(join(target, 'image.json'))) return; // built by another process while we waited
    const scratch = `${target}.partial`;
    await unmountAllUnder(scratch); // debootstrap of a crashed build may have left /proc mounted
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    const started = Date.now();
    log(`qemu image: building ${IMAGE_NAME} into ${target} (takes a minute or two, once per host)`);
    const work = join(scratch, 'work');
    const kernel = await fetchCloudKernel(join(work, 'kernel'), log);
    log(`qemu image: building initramfs for ${kernel.release}`);
    await buildInitramfs(kernel, work, join(scratch, 'initrd.img'));
    await rename(kernel.vmlinuz, join(scratch, 'vmlinuz'));
    const rootfs = join(work, 'rootfs');
    await buildGuestRootfs(rootfs, log);
    log('qemu image: packing the root file system into ext4 + qcow2');
    const diskSizeMib = await packRootDisk(rootfs, work, join(scratch, 'root.qcow2'));
    await unmountAllUnder(work);
    await rm(work, { recursive: true, force: true });
    const meta = { disk_size_mib: diskSizeMib, kernel_release: kernel.release, built_at: new Date().toISOString() };
    await writeFile(join(scratch, 'image.json'), `${JSON.stringify(meta, null, 2)}\n`);
    await rm(target, { recursive: true, force: true });
    await rename(scratch, target);
    log(`qemu image: ${IMAGE_NAME} ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  });
  const built = await readQemuBaseImage(cacheDir);
  if (!built) throw new Error(`qemu base image missing after build in ${target}`);
  return built;
}
