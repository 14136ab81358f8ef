import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `commitid-<internal id>`: which VM may commit under a client-chosen commit id.
 * Client-chosen ids are scoped by org: org O's `commit_id` X is the commit `orgCommitId(O, X)` in
 * the log (its stream, its snapshot), and O sees it as X everywhere; another org's X is another
 * commit, which O neither meets nor learns of. Two requests of one org racing for one id on
 * different VMs meet here, as every unique key in the log does: the first VM asked holds the id
 * (its own requests go through), any other VM is refused before anything is asked of it. The id
 * stays with that VM even if its commit fails. `commit_id` is the id as the client chose it (logs
 * from before the scoping have the id itself as the stream's key).
 */
export type CommitIdReserved = DomainEvent<'CommitIdReserved', { commit_id: string; vm_id: string }>;
/** The commit the id was reserved for was refused after all (the VM was busy meanwhile): the id is free again. */
export type CommitIdReleased = DomainEvent<'CommitIdReleased', { commit_id: string; vm_id: string }>;
export type CommitIdEvent = CommitIdReserved | CommitIdReleased;
export const COMMIT_ID_EVENT_TYPES = eventTypes<CommitIdEvent>()('CommitIdReserved', 'CommitIdReleased');
