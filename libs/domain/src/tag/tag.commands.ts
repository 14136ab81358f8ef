import type { DomainCommand } from '../shared/decider';

export type CreateTag = DomainCommand<'CreateTag', { tag_id: string; org_id: string; tag_name: string; commit_id: string; description: string | null; now: string }>;
/** `description`: undefined leaves it, null clears it, a string sets it (tri-state PATCH). */
export type UpdateTag = DomainCommand<'UpdateTag', { commit_id?: string | null; description?: string | null; now: string }>;
export type DeleteTag = DomainCommand<'DeleteTag', { now: string }>;

export type TagCommand = CreateTag | UpdateTag | DeleteTag;
