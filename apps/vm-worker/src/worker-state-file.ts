import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';

/**
 * The worker's durable checkpoint: the log position up to which every event has been reacted to,
 * and the streams (entities) this host must keep an eye on. Written atomically (see
 * writeJsonAtomic), so a crash leaves either the old or the new state, never a torn one.
 */
export interface WorkerState {
  position: number | null;
  streams: string[];
}

export class WorkerStateFile {
  constructor(private readonly path: string) {}

  async read(): Promise<WorkerState> {
    return (await readJsonFile<WorkerState>(this.path)) ?? { position: null, streams: [] };
  }

  async write(state: WorkerState): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    await writeJsonAtomic(this.path, state);
  }
}
