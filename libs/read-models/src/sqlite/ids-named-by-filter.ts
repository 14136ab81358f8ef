import type { Filter } from '../read-model-store.port';

/**
 * The `_id`s a filter restricts the result to, when it names them outright (`{_id: 'x'}`,
 * `{_id: {$eq: 'x'}}`, `{_id: {$in: [...]}}`): those are read by primary key instead of scanning.
 * Undefined when the filter does not pin `_id` that way.
 */
export function idsNamedByFilter(filter: Filter): string[] | undefined {
  const id = filter._id;
  if (typeof id === 'string') return [id];
  if (typeof id !== 'object' || id === null || Array.isArray(id) || Object.keys(id).length !== 1) return undefined;
  const { $eq, $in } = id as { $eq?: unknown; $in?: unknown };
  if (typeof $eq === 'string') return [$eq];
  if (Array.isArray($in) && $in.every((value) => typeof value === 'string')) return [...new Set($in as string[])];
  return undefined;
}
