import type { RecordedEvent } from '@arbor/event-store';
import type { WriteOp } from '@arbor/read-models';
import type { Projection } from './projection';

/**
 * Collection `event_stats`: per org, how many events of each type the log holds (analytics over
 * the event stream). Built with $inc, so it also proves the projector never applies an event twice.
 */
export const EVENT_STATS_COLLECTION = 'event_stats';

export const eventStatsProjection: Projection = {
  name: 'event_stats',
  collections: [EVENT_STATS_COLLECTION],
  project(_event, recorded: RecordedEvent): WriteOp[] {
    const org = recorded.metadata.org_id ?? 'system';
    return [
      {
        op: 'updateOne',
        collection: EVENT_STATS_COLLECTION,
        filter: { _id: org },
        update: { $inc: { total: 1, [`by_type.${recorded.type}`]: 1 }, $set: { last_position: recorded.position } },
        upsert: true,
      },
    ];
  },
};
