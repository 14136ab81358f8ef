import { existsSync } from 'node:fs';
import { mkdir, rm, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';
import type { ImageInfo } from '../hypervisor-driver.port';
import { withHostLock } from '../host/host-lock';
import { ensurePrivateDirectory } from '../host/private-directory';
import { runCommand } from '../host/run-command';
import { isSafeId } from '../host/safe-id';

const SCRATCH = '.partial';
const RECORD = 'image.json';

/** An image id names its directory: nothing that could escape it, nor a name the store uses itself. */
export function isSafeImageId(id: string): boolean {
  return isSafeId(id) && !id.endsWith(SCRATCH) && !id.endsWith('.lock');
}

/**
 * Built images of one driver on this host: `<dir>/<id>/` holds what the driver boots and
 * image.json, written last, so a directory without it is no image. A build happens in
 * `<id>.partial` (0700, like the store) under the image's own host lock and is renamed into
 * place whole: a crash leaves a scratch directory the next build of that id replaces.
 */
export class ImageStore {
  constructor(readonly dir: string) {}

  path(id: string, ...parts: string[]): string {
    if (!isSafeImageId(id)) throw new Error(`invalid image id ${JSON.stringify(id)}`);
    return join(this.dir, id, ...parts);
  }

  async read(id: string): Promise<ImageInfo | null> {
    if (!isSafeImageId(id)) return null;
    return readJsonFile<ImageInfo>(join(this.dir, id, RECORD));
  }

  /** Store-wide host lock: deletions, and the claims of machines on an image, take it. */
  async withLock<T>(work: () => Promise<T>): Promise<T> {
    await ensurePrivateDirectory(this.dir);
    return withHostLock(join(this.dir, '.lock'), work);
  }

  /**
   * The image, built by `make` if this host does not have it: `make` fills the scratch directory
   * and answers the image's size; the record goes in last and the directory is renamed into place.
   * A completed image is returned as it is.
   */
  async build(id: string, make: (scratch: string) => Promise<number>): Promise<ImageInfo> {
    if (!isSafeImageId(id)) throw new Error(`invalid image id ${JSON.stringify(id)}`);
    await ensurePrivateDirectory(this.dir);
    return withHostLock(join(this.dir, `${id}.lock`), async () => {
      const built = await this.read(id);
      if (built) return built;
      const scratch = join(this.dir, `${id}${SCRATCH}`);
      await removeTree(scratch);
      await mkdir(scratch, { mode: 0o700 });
      try {
        const size_mib = await make(scratch);
        const info: ImageInfo = { image_id: id, size_mib, created_at: new Date().toISOString() };
        await writeJsonAtomic(join(scratch, RECORD), info);
        await rename(scratch, join(this.dir, id));
        return info;
      } catch (error) {
        await removeTree(scratch);
        throw error;
      }
    });
  }

  /** Removes an image (call under withLock): its record first, so a crash half-way leaves no image that looks whole. */
  async remove(id: string): Promise<void> {
    if (!isSafeImageId(id)) return;
    const dir = join(this.dir, id);
    if (!existsSync(dir)) return;
    await rm(join(dir, RECORD), { force: true });
    await removeTree(dir);
    await rm(join(this.dir, `${id}.lock`), { force: true });
  }
}

/** rm -rf that stays on one file system: a tree from an image never takes a mounted one along. */
export async function removeTree(path: string): Promise<void> {
  if (!existsSync(path)) return;
  await runCommand('rm', ['-rf', '--one-file-system', '--', path]);
}
