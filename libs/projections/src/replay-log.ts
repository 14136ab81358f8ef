import type { EventStore } from '@arbor/event-store';
import type { ReadModelStore } from '@arbor/read-models';
import { BatchedUnits } from './batched-units';
import { Projector } from './projector';
import { ALL_PROJECTIONS, type Projection } from './projections';

/** Events read from the log at a time; the replay lets the process serve others between pages. */
const PAGE = 1000;
/** Events committed as one unit (see BatchedUnits). */
const EVENTS_PER_COMMIT = 1000;

export interface ReplayRange {
  /** Replays the events after this position (default: from the beginning). */
  after?: number;
  /** ...up to and including this one (default: to the end of the log). */
  until?: number;
  /** The projections to replay through (default: every one). */
  projections?: readonly Projection[];
}

/**
 * Replays the log's events in (after, until] into `readModels` with the projector's own `apply`,
 * many events a commit (BatchedUnits), and returns how many it applied. For a store nothing else
 * writes meanwhile: a rebuild with the projector stopped, or a throwaway store (time travel).
 */
export async function replayLog(events: EventStore, readModels: ReadModelStore, range: ReplayRange = {}): Promise<number> {
  const projections = [...(range.projections ?? ALL_PROJECTIONS)];
  for (const projection of projections) {
    for (const index of projection.indexes ?? []) await readModels.ensureIndex(index.collection, index.keys);
  }
  const batched = new BatchedUnits(readModels, EVENTS_PER_COMMIT);
  const projector = new Projector(events, batched, projections);
  const until = range.until ?? Number.POSITIVE_INFINITY;
  let after = range.after ?? -1;
  let applied = 0;
  for (;;) {
    const page = (await events.readAll({ after_position: after, max_count: PAGE })).filter((event) => event.position <= until);
    for (const event of page) {
      await projector.apply(event);
      after = event.position;
    }
    applied += page.length;
    if (page.length < PAGE) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await batched.flush();
  return applied;
}
