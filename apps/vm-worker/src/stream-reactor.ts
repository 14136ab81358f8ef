import type { KeyedAggregate } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';

/**
 * Something the worker keeps in line with the log: the streams of one aggregate, one entity per
 * stream. The worker calls react(id) after every event of the entity's stream (one at a time per
 * entity, in log order; entities in parallel), on start, and on periodic resyncs.
 */
export interface StreamReactor {
  /** The aggregate whose streams it acts on (its entry in the table of aggregates). */
  readonly aggregate: KeyedAggregate<any, any, any>;
  /**
   * Its reactions work machines (create, destroy, commit, free a snapshot): they take a slot of the
   * worker's pool of machine work (ARBOR_WORKER_CONCURRENCY). Not for what may run for as long as a
   * user wants (an exec) or waits on other reactions (a deploy: its VM's boot needs a slot) or for
   * minutes (an image build), nor for what only appends.
   */
  readonly machineWork?: boolean;
  /**
   * Brings the entity in line with its stream: makes the driver calls needed and appends their
   * outcomes. Must be idempotent: reacting to a converged entity does nothing. Returns true while
   * the entity still needs this host's attention (it is then resynced periodically).
   */
  react(id: string): Promise<boolean>;
  /** Entities the host has that the log may have forgotten (e.g. machines), reconciled on start. */
  discover?(): Promise<string[]>;
  /**
   * Entities of its aggregate that an event of another aggregate's stream concerns (a deleted
   * VM's domains): they are reacted to as well, and the checkpoint waits for them too.
   */
  relatedTo?(event: RecordedEvent): string[];
}
