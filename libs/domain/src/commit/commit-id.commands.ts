import type { DomainCommand } from '../shared/decider';

export type ReserveCommitId = DomainCommand<'ReserveCommitId', { commit_id: string; vm_id: string }>;
export type CommitIdCommand = ReserveCommitId;
