import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The worker's durable checkpoint: the log position up to which every event has been reacted to,
 * and the streams (entities) this host must keep an eye on. Written atomically (temp file, fsync, rename), so a
 * crash leaves either the old or the new state, never a torn one.
 */
export interface WorkerState {
  position: number | null;
  streams: string[];
}

export class WorkerStateFile {
  constructor(private readonly path: string) {}

  read(): WorkerState {
    if (!existsSync(this.path)) return { position: null, streams: [] };
    return JSON.parse(readFileSync(this.path, 'utf8')) as WorkerState;
  }

  write(state: WorkerState): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const temp = `${this.path}.tmp`;
    const fd = openSync(temp, 'w');
    try {
      writeSync(fd, JSON.stringify(state));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.path);
  }
}
