import { runCommand } from '../host/run-command';

/** What the kit helper's prepare-tree found in a root filesystem. */
export interface RootTreeSize {
  entries: number;
  /** What its entries take on disk (du's count: a sparse file counts its data, not its length). */
  bytes: number;
}

function parse(output: string): RootTreeSize {
  const found = /entries=(\d+) bytes=(\d+)/.exec(output);
  if (!found) throw new Error(`prepare-tree said ${JSON.stringify(output.trim())}`);
  return { entries: Number(found[1]), bytes: Number(found[2]) };
}

/**
 * Checks an image's root filesystem before anything of the host reads it for a machine: no other
 * file system mounted inside, no hard link to a file outside it (whose content would land in the
 * image). The kit's static helper walks it from open directories without following a symlink
 * (arbor-guest.c, prepare-tree).
 */
export async function checkRootTree(helper: string, dir: string): Promise<RootTreeSize> {
  return parse(await runCommand(helper, ['prepare-tree', dir]));
}

/**
 * Checks it, then makes it a sandbox layer in place: ids shifted into the machines' range
 * (`first`, `count` ids), device nodes removed, setuid and setgid bits cleared, trusted.*
 * attributes (overlayfs's own) removed. Nothing in a layer then acts as a device or a privileged
 * program on the host, whatever the image held.
 */
export async function prepareSandboxLayer(helper: string, dir: string, ids: { first: number; count: number }): Promise<RootTreeSize> {
  return parse(await runCommand(helper, ['prepare-tree', '--shift', `${ids.first}:${ids.count}`, dir]));
}
