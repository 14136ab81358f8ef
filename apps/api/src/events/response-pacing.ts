import type { ServerResponse } from 'node:http';

/** How long a client may read nothing while its socket buffer is full before it is cut off. */
export const CLIENT_STALL_MS = 120_000;

/**
 * Writes one chunk of a long response at the client's pace. When the socket's buffer is full
 * (`write` answered false) it waits for 'drain' before the caller produces more, so a slow
 * reader costs the buffer and nothing more; a client that reads nothing for `stallMs` is cut off
 * (it resumes from the last position it got). Resolves true while the client takes more.
 */
export function writePaced(response: ServerResponse, chunk: string, stallMs = CLIENT_STALL_MS): Promise<boolean> {
  if (response.destroyed || response.writableEnded) return Promise.resolve(false);
  if (response.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (more: boolean) => {
      clearTimeout(stall);
      response.off('drain', drained);
      response.off('close', closed);
      resolve(more);
    };
    const drained = () => settle(true);
    const closed = () => settle(false);
    const stall = setTimeout(() => {
      response.destroy();
      settle(false);
    }, stallMs);
    response.on('drain', drained);
    response.on('close', closed);
  });
}

/**
 * writePaced with one chunk in flight: a write waits until the chunk before it has drained, then
 * returns at once, so the next chunk is made while this one drains. Holds at most two chunks.
 */
export class PacedWriter {
  private previous = Promise.resolve(true);

  constructor(
    private readonly response: ServerResponse,
    private readonly stallMs = CLIENT_STALL_MS,
  ) {}

  /** Resolves false (writing nothing) once the client has gone away. */
  async write(chunk: string): Promise<boolean> {
    if (!(await this.previous)) return false;
    this.previous = writePaced(this.response, chunk, this.stallMs);
    return true;
  }

  /** Resolves when the last chunk has drained: true while the client is still there. */
  drained(): Promise<boolean> {
    return this.previous;
  }
}
