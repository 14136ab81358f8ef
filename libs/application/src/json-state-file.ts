import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';

/**
 * A process's durable state as one JSON file (a checkpoint): read back as written, or `initial`
 * when there is none yet; written atomically (see writeJsonAtomic), its directory made first, so
 * a crash leaves either the old or the new state, never a torn one.
 */
export class JsonStateFile<T> {
  constructor(
    private readonly path: string,
    private readonly initial: () => T,
  ) {}

  async read(): Promise<T> {
    return (await readJsonFile<T>(this.path)) ?? this.initial();
  }

  async write(state: T): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    await writeJsonAtomic(this.path, state);
  }
}
