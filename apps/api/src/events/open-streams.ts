import { type BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';

/**
 * The long responses in flight (live streams, exports). Each gets a signal that fires when its
 * client goes away or when the api shuts down; shutdown fires them all first, so the server's
 * close does not wait for followers that would never leave on their own.
 */
@Injectable()
export class OpenStreams implements BeforeApplicationShutdown {
  private readonly running = new Set<AbortController>();

  /** Starts a long response: it sends `Connection: close`, so its socket goes when it ends. */
  start(response: ServerResponse): AbortSignal {
    const controller = new AbortController();
    this.running.add(controller);
    response.setHeader('Connection', 'close');
    response.once('close', () => {
      this.running.delete(controller);
      controller.abort();
    });
    return controller.signal;
  }

  beforeApplicationShutdown(): void {
    for (const controller of this.running) controller.abort();
    this.running.clear();
  }
}
