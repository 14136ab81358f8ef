import { upcast } from '@arbor/application';
import type { EventStore } from '@arbor/event-store';
import type { ExecEvent } from '@arbor/domain';

/** How an exec ended: its exit code, or why it could not run (failed) or was cut off (lost). */
export interface ExecEnding {
  kind: 'exited' | 'failed' | 'lost';
  exit_code: number | null;
  reason: string | null;
  /** Its output passed the cap (the command was stopped there). */
  output_limited: boolean;
}

/**
 * Follows one exec stream from the log, reading only what was appended since the last look, so
 * waiting on a chatty command costs each event once: whether it started, and how it ended.
 */
export class ExecWatch {
  private from = 0;
  started = false;
  ending: ExecEnding | null = null;
  private limited = false;

  constructor(
    private readonly store: EventStore,
    readonly stream: string,
  ) {}

  /** Reads what is new; returns the ending once there is one. */
  async poll(): Promise<ExecEnding | null> {
    if (this.ending) return this.ending;
    const events = await this.store.readStream(this.stream, { from_revision: this.from });
    for (const stored of events) {
      this.from = stored.revision + 1;
      const recorded = upcast(stored);
      const event = { type: recorded.type, data: recorded.data } as ExecEvent;
      switch (event.type) {
        case 'ExecStarted':
          this.started = true;
          break;
        case 'ExecOutputLimitReached':
          this.limited = true;
          break;
        case 'ExecExited':
          this.ending = { kind: 'exited', exit_code: event.data.exit_code, reason: null, output_limited: this.limited };
          break;
        case 'ExecFailed':
          this.ending = { kind: 'failed', exit_code: null, reason: event.data.reason, output_limited: this.limited };
          break;
        case 'ExecLost':
          this.ending = { kind: 'lost', exit_code: null, reason: event.data.reason, output_limited: this.limited };
          break;
      }
      if (this.ending) break;
    }
    return this.ending;
  }
}
