import { deterministicUuid, schemaVersionOf, UPCASTERS, type DomainEvent } from '@arbor/domain';
import type { NewEvent, RecordedEvent } from '@arbor/event-store';
import type { CommandContext } from './command-context';

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
      schema_version: schemaVersionOf(event.type),
      correlation_id: context.correlation_id,
      causation_id: context.causation_id,
      actor_key_id: context.actor_key_id,
      org_id: context.org_id,
    },
  }));
}

/** An event at its type's current schema version: the upcasters of the catalogue bring older ones up. */
export function upcast(event: RecordedEvent): RecordedEvent {
  let version = event.metadata.schema_version ?? 1;
  let data = event.data;
  const chain = UPCASTERS[event.type];
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
