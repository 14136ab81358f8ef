import { mkdir } from 'node:fs/promises';
import type { MachineLayout } from './machine-layout';
import { runCommand } from './run-command';

/**
 * Mounts the machine's copy-on-write root: the shared base is the read-only lower layer, every write
 * lands in the machine's own upper layer, so machines never see each other's files.
 */
export async function mountOverlayRoot(baseRootfs: string, layout: MachineLayout): Promise<void> {
  for (const dir of [layout.upper, layout.work, layout.merged]) await mkdir(dir, { recursive: true });
  const options = `lowerdir=${baseRootfs},upperdir=${layout.upper},workdir=${layout.work}`;
  await runCommand('mount', ['-t', 'overlay', 'overlay', '-o', options, layout.merged]);
}
