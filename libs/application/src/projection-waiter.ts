import type { ReadModelStore } from '@arbor/read-models';
import { waitUntil } from './wait-until';

/** The projector's checkpoint name: how far the read models have caught up with the log. */
export const PROJECTOR_CHECKPOINT = 'projector';

/**
 * Read-your-writes: a write answers only after the projector has applied the position it wrote,
 * so any read that starts after the response sees the write. Polls the projector's checkpoint (a
 * projector in another process), and looks again at once when a projector in this process commits.
 */
export class ProjectionWaiter {
  constructor(
    private readonly readModels: ReadModelStore,
    private readonly timeoutMs: number,
  ) {}

  async waitFor(position: number | null): Promise<void> {
    if (position === null) return;
    await waitUntil(
      `the read models to reach log position ${position}`,
      async () => ((await this.readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) ?? -1) >= position || undefined,
      {
        timeoutMs: this.timeoutMs,
        // The embedded projector commits through this very store: its commit past the position wakes the wait.
        wake: (listener) => this.readModels.onCommitted((checkpoint) => checkpoint?.name === PROJECTOR_CHECKPOINT && checkpoint.position >= position && listener()),
      },
    );
  }
}
