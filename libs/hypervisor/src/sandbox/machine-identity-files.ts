import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineSpec } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from './environment-file';

/** The machine's hostname: its full VM id (a UUID fits the 64-character limit and is unambiguous). */
export function hostnameOf(spec: MachineSpec): string {
  return spec.vm_id;
}

/** Writes what the machine knows about itself into its root (its upper layer, never the base). */
export async function writeMachineIdentityFiles(root: string, spec: MachineSpec): Promise<void> {
  await writeFile(join(root, 'etc/hostname'), `${hostnameOf(spec)}\n`);
  await writeFile(join(root, 'etc/environment'), formatEnvironmentFile(spec.env));
  await mkdir(join(root, 'etc/arbor'), { recursive: true });
  await writeFile(join(root, 'etc/arbor/spec.json'), `${JSON.stringify(spec, null, 2)}\n`);
}
