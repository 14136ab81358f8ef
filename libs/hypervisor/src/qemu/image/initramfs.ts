import { chmod, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { runCommand } from '../../host/run-command';
import { INITRAMFS_INIT, INITRAMFS_MODULES } from './guest-init-scripts';
import { moduleLoadOrder, type GuestKernel } from './guest-kernel';

const BUSYBOX = '/bin/busybox';

/** Builds a gzip'd newc initramfs: busybox-static, the virtio modules and an /init that switch_roots. */
export async function buildInitramfs(kernel: GuestKernel, workDir: string, output: string): Promise<void> {
  const root = join(workDir, 'initramfs');
  await mkdir(join(root, 'bin'), { recursive: true });
  await mkdir(join(root, 'lib/modules'), { recursive: true });
  await copyFile(BUSYBOX, join(root, 'bin/busybox')).catch((error) => {
    throw new Error(`${BUSYBOX} missing (apt-get install busybox-static): ${error.message}`);
  });
  await chmod(join(root, 'bin/busybox'), 0o755);
  const modules = await moduleLoadOrder(kernel.modulesDir, INITRAMFS_MODULES);
  for (const module of modules) await copyFile(join(kernel.modulesDir, module), join(root, 'lib/modules', basename(module)));
  await writeFile(join(root, 'modules'), modules.map((module) => basename(module)).join('\n') + '\n');
  await writeFile(join(root, 'init'), INITRAMFS_INIT, { mode: 0o755 });
  await runCommand('sh', ['-c', 'cd "$1" && find . | cpio --quiet -o -H newc | gzip -1 > "$2"', 'sh', root, output]);
}
