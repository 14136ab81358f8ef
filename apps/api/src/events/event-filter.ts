import type { EventFilterQueryDto } from '@arbor/contracts';
import { aggregateOfStream, IdempotentResponse, streamCategory } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import type { Principal } from '../auth/principal';

/** Whether the caller sees an event, with the filters it asked for (its envelope decides, never its data). */
export type EventFilter = (event: Pick<RecordedEvent, 'stream_id' | 'type' | 'metadata'>) => boolean;

/**
 * The one rule for what the feed, the live stream and the export show: a key sees its org's
 * events (`metadata.org_id`), an operator key every org's; internal bookkeeping (idempotency
 * records) is never shown; then each filter given (types, exact streams, stream categories) must
 * match. A value nobody writes (an unknown type) matches nothing, which is not an error.
 */
export function eventFilter(principal: Principal, query: EventFilterQueryDto): EventFilter {
  const types = setOf(query.type);
  const streams = setOf(query.stream);
  const categories = setOf(query.category);
  return (event) =>
    aggregateOfStream(event.stream_id) !== IdempotentResponse &&
    (principal.is_operator || event.metadata.org_id === principal.org_id) &&
    (!types || types.has(event.type)) &&
    (!streams || streams.has(event.stream_id)) &&
    (!categories || categories.has(streamCategory(event.stream_id)));
}

function setOf(values: string[] | undefined): ReadonlySet<string> | null {
  return values?.length ? new Set(values) : null;
}
