import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `commitid-<id in the log>`: which VM may commit under a client-chosen commit id. Chosen
 * ids are scoped by org: org O's `commit_id` X is the commit `orgCommitId(O, X)` in the log, the
 * stream's key, and `commit_id` here is X as the client chose it (streams from before the scoping
 * are keyed by the chosen id itself). Two requests of one org racing for one id on different VMs
 * meet here, as every unique key in the log does: the first VM asked holds the id (its own
 * requests go through), any other VM is refused before anything is asked of it. The id stays with
 * that VM even if its commit fails; a commit refused before it was asked gives it back.
 */
export type CommitIdReserved = DomainEvent<'CommitIdReserved', { commit_id: string; vm_id: string }>;
/** The commit the id was reserved for was refused after all (the VM was busy meanwhile): the id is free again. */
export type CommitIdReleased = DomainEvent<'CommitIdReleased', { commit_id: string; vm_id: string }>;
export type CommitIdEvent = CommitIdReserved | CommitIdReleased;
export const COMMIT_ID_EVENT_TYPES = eventTypes<CommitIdEvent>()('CommitIdReserved', 'CommitIdReleased');
