import type { DomainCommand } from '../shared/decider';

/** `commit_id`: the id as the client chose it. */
export type ReserveCommitId = DomainCommand<'ReserveCommitId', { commit_id: string; vm_id: string }>;
export type ReleaseCommitId = DomainCommand<'ReleaseCommitId', { commit_id: string; vm_id: string }>;
export type CommitIdCommand = ReserveCommitId | ReleaseCommitId;
