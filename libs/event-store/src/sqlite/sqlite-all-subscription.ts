import type { EventEmitter } from 'node:events';
import type { AllSubscription, RecordedEvent } from '../event-store.port';

/** Events read per catch-up query, so a long log is never loaded at once. */
const PAGE_SIZE = 256;

export interface SqliteAllSubscriptionOptions {
  /** Deliver events with a position greater than this. */
  afterPosition: number;
  readAfter: (position: number, limit: number) => Promise<RecordedEvent[]>;
  /** Emits 'appended' for appends through this process. */
  signals: EventEmitter;
  /** Other processes' appends raise no signal here: look for them this often. */
  pollIntervalMs: number;
  onStopped: () => void;
}

/**
 * A feed of the global log that reads forward from the last delivered position: catch-up and live
 * delivery are the same query, so nothing is skipped or delivered twice across the switch.
 */
export class SqliteAllSubscription implements AllSubscription {
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(private readonly options: SqliteAllSubscriptionOptions) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    let position = this.options.afterPosition;
    try {
      while (!this.stopped) {
        const page = await this.options.readAfter(position, PAGE_SIZE);
        for (const event of page) {
          if (this.stopped) return;
          position = event.position;
          yield event;
        }
        // Checked again: unsubscribe may have come while the page was being read.
        if (page.length < PAGE_SIZE && !this.stopped) await this.nextSignal();
      }
    } finally {
      await this.unsubscribe();
    }
  }

  async unsubscribe(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wake?.();
    this.options.onStopped();
  }

  /** Resolves on an append through this process, after one poll interval, or on unsubscribe. */
  private nextSignal(): Promise<void> {
    const { signals, pollIntervalMs } = this.options;
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signals.off('appended', wake);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(wake, pollIntervalMs);
      signals.on('appended', wake);
      this.wake = wake;
    });
  }
}
