import { eventTypes, type DomainEvent } from '../shared/decider';

/** The public repository tag a fork starts from, as resolved when it was asked for. */
export interface ForkSource {
  org_id: string;
  org_name: string;
  repo_name: string;
  tag_name: string;
  commit_id: string;
}

/** Why a fork could not finish: `conflict` (the target tag was taken meanwhile), `not_found`, `failed`. */
export type ForkFailureKind = 'conflict' | 'not_found' | 'failed';

/**
 * Stream `fork-<id>`: one fork of a public repository tag into the caller's org, a saga driven by
 * the worker. Each step is an event: the VM started from the source commit, that VM committed
 * into the caller's org, the target repository there, then RepoForked with the new tag. A step
 * that cannot be taken aborts the fork; what it made is then removed and ForkFailed ends it.
 * The ids of what it makes (VM, commit, repository, tag) are fixed when it is asked for.
 */
export type ForkRequested = DomainEvent<
  'ForkRequested',
  {
    fork_id: string;
    org_id: string;
    owner_id: string;
    source: ForkSource;
    repo_name: string;
    tag_name: string;
    /** What the fork makes: its VM (with the VM's own SSH public key), commit, repository (if none), tag. */
    vm_id: string;
    vm_ssh_public_key: string;
    /** The SSH key generation the VM's key pair derives from. */
    vm_ssh_key_generation: number;
    commit_id: string;
    repo_id: string;
    tag_id: string;
    requested_at: string;
  }
>;
export type ForkVmStarted = DomainEvent<'ForkVmStarted', { fork_id: string; vm_id: string }>;
export type ForkCommitted = DomainEvent<'ForkCommitted', { fork_id: string; commit_id: string }>;
/** `created`: the fork made the repository (and removes it should it fail); else it was there. */
export type ForkRepositoryReady = DomainEvent<'ForkRepositoryReady', { fork_id: string; repo_id: string; created: boolean }>;
export type RepoForked = DomainEvent<
  'RepoForked',
  { fork_id: string; org_id: string; repo_name: string; tag_name: string; tag_id: string; commit_id: string; vm_id: string; reference: string; forked_at: string }
>;
/** The fork cannot finish; the worker now removes what it made. */
export type ForkAborted = DomainEvent<'ForkAborted', { fork_id: string; kind: ForkFailureKind; reason: string }>;
/** Final: nothing the fork made is left. */
export type ForkFailed = DomainEvent<'ForkFailed', { fork_id: string; kind: ForkFailureKind; reason: string; failed_at: string }>;

export type ForkEvent = ForkRequested | ForkVmStarted | ForkCommitted | ForkRepositoryReady | RepoForked | ForkAborted | ForkFailed;
export const FORK_EVENT_TYPES = eventTypes<ForkEvent>()('ForkRequested', 'ForkVmStarted', 'ForkCommitted', 'ForkRepositoryReady', 'RepoForked', 'ForkAborted', 'ForkFailed');
