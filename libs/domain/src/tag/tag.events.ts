import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `tag-<org>-<name>`: a movable name for a commit within an org. The stream is also the
 * name's reservation: creating appends with "no stream" (or after a deletion), so two concurrent
 * creates of one name cannot both win.
 */
export type TagCreated = DomainEvent<
  'TagCreated',
  { tag_id: string; org_id: string; tag_name: string; commit_id: string; description: string | null; created_at: string }
>;
export type TagMoved = DomainEvent<'TagMoved', { tag_id: string; commit_id: string; previous_commit_id: string; moved_at: string }>;
export type TagDescriptionChanged = DomainEvent<'TagDescriptionChanged', { tag_id: string; description: string | null; changed_at: string }>;
export type TagDeleted = DomainEvent<'TagDeleted', { tag_id: string; deleted_at: string }>;
export type TagEvent = TagCreated | TagMoved | TagDescriptionChanged | TagDeleted;
export const TAG_EVENT_TYPES = eventTypes<TagEvent>()('TagCreated', 'TagMoved', 'TagDescriptionChanged', 'TagDeleted');
