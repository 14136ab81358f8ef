import type { AnyAggregate, DomainEvent, EventOf } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import type { ReadModelStore, WriteOp } from '@arbor/read-models';

/**
 * What a projection may read while projecting: the read models as they stand after every earlier
 * event (the projector applies events one at a time, in log order).
 */
export type ProjectionReads = Pick<ReadModelStore, 'findOne'>;

/**
 * A read model: which collections it owns (so a rebuild can empty them), the aggregates whose
 * events it reads, and the writes one event makes. The projector routes each event by the table
 * of aggregates, upcasts it once, and commits the writes together with its checkpoint. Most
 * projections need only the event; one that derives a field from an earlier document (a commit's
 * ancestors from its parent's) reads it through `reads`.
 */
export interface Projection<E extends DomainEvent = DomainEvent> {
  readonly name: string;
  readonly collections: string[];
  /** Indexes the list/get queries need. */
  readonly indexes?: { collection: string; keys: Record<string, 1 | -1> }[];
  /** The aggregates whose events it projects; absent: every event of the log. */
  readonly aggregates?: readonly AnyAggregate[];
  project(event: E, recorded: RecordedEvent, reads: ProjectionReads): WriteOp[] | Promise<WriteOp[]>;
}

/** A projection of one aggregate's events, typed by them. */
export function projectionOf<A extends AnyAggregate>(aggregate: A, projection: Omit<Projection<EventOf<A>>, 'aggregates'>): Projection {
  return { ...projection, aggregates: [aggregate] } as Projection;
}
