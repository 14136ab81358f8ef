import { redactedFieldsOf, sealedFieldsOf, UPCASTERS } from '@arbor/domain';
import type { EventMetadata, RecordedEvent, SerializedRecordedEvent } from '@arbor/event-store';
import { upcast } from './event-envelope';

/** What a redacted field (a secret or its hash) shows in the feed. */
export const REDACTED = '[redacted]';

/** An event as Arbor shows it outside: an item of `GET /api/v1/events`, a webhook delivery's body. */
export interface PresentedEvent {
  position: number;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: Pick<EventMetadata, 'schema_version' | 'correlation_id' | 'causation_id' | 'actor_key_id' | 'org_id'>;
  created_at: string;
}

/**
 * An event as the feed (and a webhook, the live stream, an export) shows it: upcast to its type's
 * current version, with the fields the catalogue marks `@redacted` replaced, and those it marks
 * `@sealed` too (a map keeps its names, each value replaced; an absent value stays null): sealed
 * or not, a secret is never shown. History is never rewritten: the log keeps what was written,
 * and every event, however old (secrets written in clear before they were sealed included), is
 * shown redacted.
 */
export function presentEvent(recorded: RecordedEvent): PresentedEvent {
  const event = upcast(recorded);
  const { schema_version, correlation_id, causation_id, actor_key_id, org_id } = event.metadata;
  return {
    position: event.position,
    stream_id: event.stream_id,
    revision: event.revision,
    event_id: event.id,
    type: event.type,
    data: redacted(event.type, event.data),
    metadata: { schema_version, correlation_id, causation_id, actor_key_id, org_id },
    created_at: event.created_at,
  };
}

/**
 * `JSON.stringify(presentEvent(event))` of an event whose data is still JSON text: the text is
 * copied as it is when nothing would change it (its type has no redacted or sealed field and it is
 * at its current version), so the export of a long log costs no parse and serialize of every event's data.
 */
export function presentedEventJson(event: SerializedRecordedEvent): string {
  const { data_json, ...envelope } = event;
  if (redactedFieldsOf(event.type).length > 0 || sealedFieldsOf(event.type).length > 0 || UPCASTERS[event.type]?.[event.metadata.schema_version ?? 1]) {
    return JSON.stringify(presentEvent({ ...envelope, data: JSON.parse(data_json) }));
  }
  const { schema_version, correlation_id, causation_id, actor_key_id, org_id } = event.metadata;
  // The keys in presentEvent's order, data spliced in between.
  const head = JSON.stringify({ position: event.position, stream_id: event.stream_id, revision: event.revision, event_id: event.id, type: event.type });
  const tail = JSON.stringify({ metadata: { schema_version, correlation_id, causation_id, actor_key_id, org_id }, created_at: event.created_at });
  return `${head.slice(0, -1)},"data":${data_json},${tail.slice(1)}`;
}

function redacted(type: string, data: unknown): unknown {
  const fields = redactedFieldsOf(type);
  const sealed = sealedFieldsOf(type);
  if ((!fields.length && !sealed.length) || typeof data !== 'object' || data === null) return data;
  const shown: Record<string, unknown> = { ...data };
  for (const field of fields.filter((name) => name in shown)) shown[field] = REDACTED;
  for (const { field, kind } of sealed.filter(({ field }) => shown[field] !== null && shown[field] !== undefined)) {
    const value = shown[field];
    shown[field] = kind === 'values' && typeof value === 'object' ? Object.fromEntries(Object.keys(value as object).map((name) => [name, REDACTED])) : REDACTED;
  }
  return shown;
}
