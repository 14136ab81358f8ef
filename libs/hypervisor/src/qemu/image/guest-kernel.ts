import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { runCommand } from '../../host/run-command';

export interface GuestKernel {
  /** The kernel release, e.g. 6.1.0-50-cloud-amd64. */
  release: string;
  /** Path of the extracted vmlinuz. */
  vmlinuz: string;
  /** Root of the extracted lib/modules/<release>. */
  modulesDir: string;
}

/**
 * Downloads the Debian cloud kernel (`linux-image-cloud-amd64` names the current versioned package)
 * with `apt-get download` and unpacks it with dpkg-deb into `workDir`.
 */
export async function fetchCloudKernel(workDir: string, log: (line: string) => void): Promise<GuestKernel> {
  await mkdir(workDir, { recursive: true });
  const versioned = await cloudKernelPackage(log);
  log(`qemu image: downloading ${versioned}`);
  await runCommand('sh', ['-c', `cd "$1" && apt-get download "$2" 2>&1`, 'sh', workDir, versioned]);
  const deb = (await readdir(workDir)).find((name) => name.startsWith(versioned) && name.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${versioned} left no .deb in ${workDir}`);
  const unpacked = join(workDir, 'unpacked');
  await runCommand('dpkg-deb', ['-x', join(workDir, deb), unpacked]);
  const release = versioned.replace(/^linux-image-/, '');
  const vmlinuz = join(workDir, 'vmlinuz');
  await copyFile(join(unpacked, 'boot', `vmlinuz-${release}`), vmlinuz);
  return { release, vmlinuz, modulesDir: join(unpacked, 'lib/modules', release) };
}

/**
 * The versioned package `linux-image-cloud-amd64` depends on. Images and containers often ship
 * without package lists (`rm -rf /var/lib/apt/lists/*`): then the lists are fetched once.
 */
async function cloudKernelPackage(log: (line: string) => void): Promise<string> {
  const resolve = async () => {
    const depends = await runCommand('apt-cache', ['depends', 'linux-image-cloud-amd64']).catch((error: Error) => error.message);
    return { depends, versioned: /Depends:\s*(linux-image-\S+-cloud-amd64)/.exec(depends)?.[1] };
  };
  let { depends, versioned } = await resolve();
  if (!versioned) {
    log('qemu image: the package lists do not know linux-image-cloud-amd64; running apt-get update');
    await runCommand('apt-get', ['update', '-qq']);
    ({ depends, versioned } = await resolve());
  }
  if (!versioned) throw new Error(`cannot resolve linux-image-cloud-amd64 (apt-cache depends said: ${depends.trim()})`);
  return versioned;
}

/**
 * The module files (relative to the modules dir) needed to load `wanted`, dependencies first. The
 * package ships no modules.dep (depmod runs at install), so dependencies come from each module's
 * own `depends=` modinfo string; built-in modules need no file.
 */
export async function moduleLoadOrder(modulesDir: string, wanted: string[]): Promise<string[]> {
  const normalize = (name: string) => name.replace(/-/g, '_');
  const nameOf = (file: string) => normalize(basename(file, '.ko'));
  const order = (await readFile(join(modulesDir, 'modules.order'), 'utf8')).split('\n').filter(Boolean);
  const builtin = new Set(
    (await readFile(join(modulesDir, 'modules.builtin'), 'utf8')).split('\n').filter(Boolean).map(nameOf),
  );
  const files = new Map(order.map((file) => [nameOf(file), file]));
  const result: string[] = [];
  const visited = new Set<string>();
  const visit = async (raw: string) => {
    const name = normalize(raw);
    if (visited.has(name) || builtin.has(name)) return;
    visited.add(name);
    const file = files.get(name);
    if (!file) throw new Error(`kernel module ${name} is neither built in nor shipped`);
    const bytes = await readFile(join(modulesDir, file));
    const start = bytes.indexOf('depends=');
    const depends = start < 0 ? '' : bytes.subarray(start + 8, bytes.indexOf(0, start)).toString();
    for (const dependency of depends.split(',').filter(Boolean)) await visit(dependency);
    result.push(file);
  };
  for (const module of wanted) await visit(module);
  return result;
}
