import type { DomainCommand } from '../shared/decider';
import type { CommitCreated } from './commit.events';

/** From the vm-worker: the snapshot exists on the host. */
export type RecordCommitCreated = DomainCommand<'RecordCommitCreated', CommitCreated['data']>;
/** PATCH /commits/{id}: blank name or description leaves it as it is. */
export type UpdateCommit = DomainCommand<'UpdateCommit', { is_public: boolean; name?: string | null; description?: string | null }>;
export type DeleteCommit = DomainCommand<'DeleteCommit', { now: string }>;
/**
 * A VM of `org_id` starts from the commit; refused (not found) once it is deleted or not readable.
 * `through_public_repository`: the API found the commit through a public repository's tag, which
 * makes it restorable by any org even while the commit itself is private.
 */
export type UseCommit = DomainCommand<'UseCommit', { vm_id: string; org_id: string; through_public_repository?: boolean; now: string }>;
/** The VM is gone from the host: it no longer holds the commit. */
export type ReleaseCommit = DomainCommand<'ReleaseCommit', { vm_id: string; now: string }>;

/** A tag of `org_id` is about to point at the commit (`tag` names it for people, `tag_stream` for the log). */
export type HoldCommitForTag = DomainCommand<'HoldCommitForTag', { tag_id: string; tag: string; tag_stream: string; org_id: string; now: string }>;
/** The tag no longer points at the commit. */
export type ReleaseCommitFromTag = DomainCommand<'ReleaseCommitFromTag', { tag_id: string; now: string }>;

export type CommitCommand = RecordCommitCreated | UpdateCommit | DeleteCommit | UseCommit | ReleaseCommit | HoldCommitForTag | ReleaseCommitFromTag;
