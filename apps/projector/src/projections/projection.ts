import type { RecordedEvent } from '@arbor/event-store';
import type { ReadModelStore, WriteOp } from '@arbor/read-models';

/**
 * What a projection may read while projecting: the read models as they stand after every earlier
 * event (the projector applies events one at a time, in log order).
 */
export type ProjectionReads = Pick<ReadModelStore, 'findOne'>;

/**
 * A read model: which collections it owns (so a rebuild can empty them) and the writes one event
 * makes. The projector commits the writes together with its checkpoint. Most projections need
 * only the event; one that derives a field from an earlier document (a commit's ancestors from
 * its parent's) reads it through `reads`.
 */
export interface Projection {
  readonly name: string;
  readonly collections: string[];
  /** Indexes the list/get queries need. */
  readonly indexes?: { collection: string; keys: Record<string, 1 | -1> }[];
  project(event: RecordedEvent, reads: ProjectionReads): WriteOp[] | Promise<WriteOp[]>;
}
