import { upcast } from '@arbor/application';
import type { EventDto } from '@arbor/contracts';
import type { RecordedEvent } from '@arbor/event-store';

export function presentEvent(recorded: RecordedEvent): EventDto {
  const event = upcast(recorded);
  const { schema_version, correlation_id, causation_id, actor_key_id, org_id } = event.metadata;
  return {
    position: event.position,
    stream_id: event.stream_id,
    revision: event.revision,
    event_id: event.id,
    type: event.type,
    data: event.data,
    metadata: { schema_version, correlation_id, causation_id, actor_key_id, org_id },
    created_at: event.created_at,
  };
}
