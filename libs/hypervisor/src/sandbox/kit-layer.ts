import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withHostLock } from '../host/host-lock';
import { runCommand } from '../host/run-command';
import { ensureGuestKit, GUEST_KIT_NAME, type GuestKit } from '../kit/guest-kit';
import { KIT_MOUNT } from '../kit/kit-paths';
import { GUEST_IDS, shiftIntoGuestRange } from './guest-ids';

/** The kit as a sandbox machine sees it: a read-only layer whose only entry is /.arbor. */
export interface SandboxKit {
  kit: GuestKit;
  /** The overlay layer (a directory holding `.arbor`), owned by guest root. */
  layer: string;
}

export function kitLayerPath(cacheDir: string): string {
  return join(cacheDir, 'sandbox', `${GUEST_KIT_NAME}-ids-${GUEST_IDS.hostFirst}`);
}

/**
 * The guest kit (kit/guest-kit.ts) as a layer every machine's root gets right under its identity
 * layer, over the image: copied once from the kit's tree with its ownership shifted into the
 * machines' id range, so guest root owns it as it owns the base. The container then mounts /.arbor
 * read-only (container-config.ts), so a machine cannot change the programs Arbor runs in it (nor
 * carry a change of them into its snapshots).
 */
export async function ensureKitLayer(cacheDir: string, log: (line: string) => void): Promise<SandboxKit> {
  const kit = await ensureGuestKit(cacheDir, log);
  const layer = kitLayerPath(cacheDir);
  if (existsSync(layer)) return { kit, layer };
  await mkdir(join(cacheDir, 'sandbox'), { recursive: true });
  await withHostLock(`${layer}.lock`, async () => {
    if (existsSync(layer)) return;
    const scratch = `${layer}.partial`;
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { mode: 0o755 });
    await runCommand('cp', ['-a', kit.tree, join(scratch, KIT_MOUNT.slice(1))]);
    await shiftIntoGuestRange(join(scratch, KIT_MOUNT.slice(1)));
    await rename(scratch, layer);
  });
  return { kit, layer };
}
