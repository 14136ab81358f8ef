import { copyFile, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { runCommand } from '../host/run-command';

/** Formats a disk chain ends in: qcow2 (the default image, snapshot layers) or raw (a built image's ext4). */
export type BaseFormat = 'qcow2' | 'raw';

/** A new qcow2 overlay on `backing`, of `sizeMib` (or the backing's size when omitted). */
export async function createOverlay(path: string, backing: string, sizeMib?: number, backingFormat: BaseFormat = 'qcow2'): Promise<void> {
  const args = ['create', '-q', '-f', 'qcow2', '-b', backing, '-F', backingFormat, path];
  await runCommand('qemu-img', sizeMib ? [...args, `${sizeMib}M`] : args);
}

/** An overlay naming `backing` before that file exists (-u: not opened), so its size is given. */
export async function createOverlayOnFuture(path: string, backing: string, sizeMib: number): Promise<void> {
  await runCommand('qemu-img', ['create', '-q', '-f', 'qcow2', '-u', '-b', backing, '-F', 'qcow2', path, `${sizeMib}M`]);
}

/**
 * The backing file named in a qcow2 header (null for a standalone image). Read directly: it is
 * cheap and takes no image lock, so chains of running machines can be walked.
 */
export async function backingFileOf(path: string): Promise<string | null> {
  const file = await open(path, 'r');
  try {
    const header = Buffer.alloc(20);
    await file.read(header, 0, 20, 0);
    if (header.readUInt32BE(0) !== 0x514649fb) throw new Error(`${path} is not a qcow2 image`);
    const offset = Number(header.readBigUInt64BE(8));
    const size = header.readUInt32BE(16);
    if (offset === 0 || size === 0) return null;
    const name = Buffer.alloc(size);
    await file.read(name, 0, size, offset);
    return resolve(dirname(path), name.toString('utf8'));
  } finally {
    await file.close();
  }
}

/** Whether a file is a qcow2 image (a raw base has no header to read a backing file from). */
async function isQcow2(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const magic = Buffer.alloc(4);
    await file.read(magic, 0, 4, 0);
    return magic.readUInt32BE(0) === 0x514649fb;
  } finally {
    await file.close();
  }
}

/** Every file of the chain from `top` down to the standalone base (qcow2, or a raw image's disk). */
export async function backingChain(top: string): Promise<string[]> {
  const chain = [top];
  for (let backing = await backingFileOf(top); backing; backing = (await isQcow2(backing)) ? await backingFileOf(backing) : null) {
    chain.push(backing);
  }
  return chain;
}

/**
 * Copies the guest-visible content of the chain under `top` into one fresh layer backed directly
 * by `base`: long chains cost a lookup per layer on every cache miss and an open file per layer.
 * The top layer is copied as it is, then rebased onto `base` in qemu-img's safe mode, which writes
 * into it every cluster where the old chain and `base` differ. (`qemu-img convert -B` would not
 * do: it copies only what the top layer itself holds, dropping the layers between it and the base.)
 * `-U` reads layers a running QEMU holds open (they are immutable backing files).
 */
export async function flattenOnto(top: string, base: string, output: string, baseFormat: BaseFormat = 'qcow2'): Promise<void> {
  await copyFile(top, output);
  await runCommand('qemu-img', ['rebase', '-U', '-q', '-f', 'qcow2', '-b', base, '-F', baseFormat, output]);
}
