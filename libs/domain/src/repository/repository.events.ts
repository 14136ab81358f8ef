import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `repo-<org>-<name>`: a named collection of tags (`<repo>:<tag>` references to commits) in
 * an org, private or public. The stream is also the name's reservation, as a commit tag's is: two
 * creates of one name cannot both win, and a deleted repository's name can be taken again (by a
 * new repo_id). Its tags live on the same stream, so a tag and its repository change together.
 */
export type RepositoryCreated = DomainEvent<
  'RepositoryCreated',
  { repo_id: string; org_id: string; name: string; description: string | null; created_at: string }
>;
export type RepositoryVisibilityChanged = DomainEvent<'RepositoryVisibilityChanged', { repo_id: string; is_public: boolean; changed_at: string }>;
/** Appended after a RepoTagDeleted for each of its tags, in the same append. Its commits stay. */
export type RepositoryDeleted = DomainEvent<'RepositoryDeleted', { repo_id: string; deleted_at: string }>;
export type RepoTagCreated = DomainEvent<
  'RepoTagCreated',
  { repo_id: string; tag_id: string; tag_name: string; commit_id: string; description: string | null; created_at: string }
>;
/** A repository tag pointed at another commit (RepoTagMoved, not TagMoved: that is a commit tag's event). */
export type RepoTagMoved = DomainEvent<
  'RepoTagMoved',
  { repo_id: string; tag_id: string; tag_name: string; commit_id: string; previous_commit_id: string; moved_at: string }
>;
export type RepoTagDescribed = DomainEvent<'RepoTagDescribed', { repo_id: string; tag_id: string; tag_name: string; description: string | null; changed_at: string }>;
export type RepoTagDeleted = DomainEvent<'RepoTagDeleted', { repo_id: string; tag_id: string; tag_name: string; commit_id: string; deleted_at: string }>;

export type RepositoryEvent =
  | RepositoryCreated
  | RepositoryVisibilityChanged
  | RepositoryDeleted
  | RepoTagCreated
  | RepoTagMoved
  | RepoTagDescribed
  | RepoTagDeleted;
export const REPOSITORY_EVENT_TYPES = eventTypes<RepositoryEvent>()(
  'RepositoryCreated',
  'RepositoryVisibilityChanged',
  'RepositoryDeleted',
  'RepoTagCreated',
  'RepoTagMoved',
  'RepoTagDescribed',
  'RepoTagDeleted',
);
