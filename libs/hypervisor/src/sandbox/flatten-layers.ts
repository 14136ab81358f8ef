import { mkdir, rm } from 'node:fs/promises';
import { unmountAllUnder } from '../host/host-mounts';
import { runCommand } from '../host/run-command';
import { HOST_SIDE_OPTIONS, overlayOptions } from './overlay-root';

/**
 * Copies the merged view of `lowers` (top first) into `target`, a single self-contained layer.
 * Reading through a read-only overlay mount lets the kernel apply every whiteout and opaque dir, so
 * the copy needs no overlay logic of its own. The base is included, so the result stands alone.
 */
export async function flattenLayers(lowers: string[], view: string, target: string): Promise<void> {
  await mkdir(view, { recursive: true });
  await runCommand('mount', ['-t', 'overlay', 'overlay', '-o', `ro,${HOST_SIDE_OPTIONS},${overlayOptions(lowers)}`, view]);
  try {
    await runCommand('cp', ['-a', `${view}/.`, target]);
  } finally {
    await unmountAllUnder(view);
    await rm(view, { recursive: true, force: true });
  }
}
