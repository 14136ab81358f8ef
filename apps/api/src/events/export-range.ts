import type { EventExportQueryDto } from '@arbor/contracts';
import type { EventStore } from '@arbor/event-store';

/**
 * How far the recorded times of the log may run against its order. Positions are the order;
 * `created_at` is each appending process's clock, so events of two processes (or a clock that was
 * set back) may be out of time order by a little. A time range is found with this margin and
 * then checked event by event, so it is exact as long as the disorder stays within it.
 */
export const CLOCK_SKEW_MS = 60_000;

/** What an export covers: events with `after < position <= until` and, when given, `since <= created_at < before`. */
export interface ExportRange {
  after: number;
  until: number;
  /** Milliseconds since the epoch. */
  since: number | null;
  before: number | null;
}

/**
 * The range of an export request. Without `until` it ends at the head of the log as the export
 * starts, so an export is a fixed range, never a follow. `since` moves the start forward to
 * where the log reaches that time (a binary search over positions: a few dozen one-event reads
 * whatever the log's length), so exporting yesterday does not read the years before it.
 */
export async function exportRange(store: EventStore, query: EventExportQueryDto): Promise<ExportRange> {
  const until = query.until ?? (await store.headPosition());
  const since = query.since === undefined ? null : instantOf(query.since);
  const before = query.before === undefined ? null : instantOf(query.before);
  let after = query.after ?? -1;
  if (since !== null && after < until) after = await lastPositionBefore(store, since - CLOCK_SKEW_MS, after, until);
  return { after, until, since, before };
}

/** Whether an export past this event can stop: it was recorded after the range's end, by more than the skew. */
export function pastRangeEnd(range: ExportRange, createdAt: number): boolean {
  return range.before !== null && createdAt >= range.before + CLOCK_SKEW_MS;
}

export function inTimeRange(range: ExportRange, createdAt: number): boolean {
  return (range.since === null || createdAt >= range.since) && (range.before === null || createdAt < range.before);
}

/**
 * A position p in [low, high] such that every event in (low, p] was recorded before
 * `time` (time taken to grow with position), as far on as a binary search gets: each step reads the
 * first event after the middle of what is left.
 */
async function lastPositionBefore(store: EventStore, time: number, low: number, high: number): Promise<number> {
  let lo = low;
  let hi = high;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const [first] = await store.readAll({ after_position: mid, max_count: 1 });
    if (first && first.position <= hi && Date.parse(first.created_at) < time) lo = first.position;
    else hi = mid;
  }
  return lo;
}

/** An ISO 8601 time; a date and time without an offset is taken as UTC (a date alone already is). */
function instantOf(iso: string): number {
  return Date.parse(/T[\d:.]+$/.test(iso) ? `${iso}Z` : iso);
}
