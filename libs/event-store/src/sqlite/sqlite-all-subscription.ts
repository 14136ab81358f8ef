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
  /** Set by every local append, so one that lands while a page is being read is not slept through. */
  private appendedSinceRead = false;
  private wake: (() => void) | undefined;
  private readonly onAppended = () => {
    this.appendedSinceRead = true;
    this.wake?.();
  };

  constructor(private readonly options: SqliteAllSubscriptionOptions) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    let position = this.options.afterPosition;
    this.options.signals.on('appended', this.onAppended);
    try {
      while (!this.stopped) {
        this.appendedSinceRead = false;
        const page = await this.options.readAfter(position, PAGE_SIZE);
        for (const event of page) {
          if (this.stopped) return;
          position = event.position;
          yield event;
        }
        const caughtUp = page.length < PAGE_SIZE;
        if (caughtUp && !this.stopped && !this.appendedSinceRead) await this.nextSignal();
      }
    } finally {
      this.options.signals.off('appended', this.onAppended);
      await this.unsubscribe();
    }
  }

  async unsubscribe(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.options.signals.off('appended', this.onAppended);
    this.wake?.();
    this.options.onStopped();
  }

  /** Resolves on an append through this process, after one poll interval, or on unsubscribe. */
  private nextSignal(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), this.options.pollIntervalMs);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}
