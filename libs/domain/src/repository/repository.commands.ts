import type { DomainCommand } from '../shared/decider';

export type CreateRepository = DomainCommand<'CreateRepository', { repo_id: string; org_id: string; name: string; description: string | null; now: string }>;
export type SetRepositoryVisibility = DomainCommand<'SetRepositoryVisibility', { is_public: boolean; now: string }>;
/** Deletes the repository and every tag in it (its commits stay). */
export type DeleteRepository = DomainCommand<'DeleteRepository', { now: string }>;
export type CreateRepoTag = DomainCommand<'CreateRepoTag', { tag_id: string; tag_name: string; commit_id: string; description: string | null; now: string }>;
/** At least one of commit_id and description; `description`: undefined keeps it, null clears it. */
export type UpdateRepoTag = DomainCommand<'UpdateRepoTag', { tag_name: string; commit_id?: string | null; description?: string | null; now: string }>;
export type DeleteRepoTag = DomainCommand<'DeleteRepoTag', { tag_name: string; now: string }>;

export type RepositoryCommand = CreateRepository | SetRepositoryVisibility | DeleteRepository | CreateRepoTag | UpdateRepoTag | DeleteRepoTag;
