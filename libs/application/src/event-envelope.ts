import { type DomainEvent, deterministicUuid } from '@arbor/domain';
import type { NewEvent, RecordedEvent } from '@arbor/event-store';
import type { CommandContext } from './command-context';

/** Every event type Arbor writes today is at schema version 1; upcasters bring older ones up. */
export const CURRENT_SCHEMA_VERSION = 1;

/** The id of the index-th event a command appends: derived, so a retried command repeats it. */
export function commandEventId(command_id: string, index: number, type: string): string {
  return deterministicUuid(command_id, String(index), type);
}

/** Wraps domain events for the log: deterministic ids, versioned, with the request's context. */
export function toNewEvents(events: DomainEvent[], context: CommandContext): NewEvent[] {
  return events.map((event, index) => ({
    id: commandEventId(context.command_id, index, event.type),
    type: event.type,
    data: event.data,
    metadata: {
      schema_version: CURRENT_SCHEMA_VERSION,
      correlation_id: context.correlation_id,
      causation_id: context.causation_id,
      actor_key_id: context.actor_key_id,
      org_id: context.org_id,
    },
  }));
}

/**
 * Upcasters: a function per (type, old schema version) that returns the event at the next
 * version. History is never rewritten; events are brought up to date as they are read.
 */
type Upcaster = (data: any) => any;
const upcasters: Record<string, Record<number, Upcaster>> = {};

export function upcast(event: RecordedEvent): RecordedEvent {
  let version = event.metadata.schema_version ?? 1;
  let data = event.data;
  const chain = upcasters[event.type];
  while (chain?.[version]) {
    data = chain[version](data);
    version += 1;
  }
  return version === event.metadata.schema_version ? event : { ...event, data, metadata: { ...event.metadata, schema_version: version } };
}

export function toDomainEvent<E extends DomainEvent>(event: RecordedEvent): E {
  const current = upcast(event);
  return { type: current.type, data: current.data } as E;
}
