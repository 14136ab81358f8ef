import type { RecordedEvent } from '../../../../libs/event-store/src/event-store.port';
import type { WriteOp } from '../../../../libs/read-models/src/read-model-store.port';

/**
 * A read model: which collections it owns (so a rebuild can empty them) and the writes one event
 * makes. Pure: the projector commits the writes together with its checkpoint.
 */
export interface Projection {
  readonly name: string;
  readonly collections: string[];
  /** Indexes the list/get queries need. */
  readonly indexes?: { collection: string; keys: Record<string, 1 | -1> }[];
  project(event: RecordedEvent): WriteOp[];
}
