import { eventTypes, type DomainEvent } from '../shared/decider';
import type { VmConfig } from '../vm/vm-config';

/**
 * Stream `commit-<id>`: an immutable snapshot of a VM (disk, and memory where the driver can).
 * Created by the vm-worker once the snapshot exists on the host.
 */
export type CommitCreated = DomainEvent<
  'CommitCreated',
  {
    commit_id: string;
    org_id: string;
    /** The API key that asked for the commit. */
    owner_id: string;
    name: string;
    description: string | null;
    /** The VM it was taken from. */
    parent_vm_id: string;
    /** The commit that VM had started from (null for a root VM): the chain to the root. */
    grandparent_commit_id: string | null;
    includes_memory: boolean;
    /** The machine shape VMs started from this commit get. */
    config: VmConfig;
    driver: string;
    created_at: string;
  }
>;
export type CommitUpdated = DomainEvent<
  'CommitUpdated',
  { commit_id: string; is_public: boolean; name: string; description: string | null }
>;
export type CommitDeleted = DomainEvent<'CommitDeleted', { commit_id: string; deleted_at: string }>;
/**
 * A VM starts from the commit (from_commit, every branch child): appended by the API right after
 * the VM's VmCreationRequested, and by the worker before it starts the machine from the snapshot
 * (whichever comes first; the other appends nothing). It holds the commit until released.
 */
export type CommitUsedByVm = DomainEvent<'CommitUsedByVm', { commit_id: string; vm_id: string; used_at: string }>;
/** The VM's machine is gone (it was deleted, or failed to boot): it no longer holds the commit. */
export type CommitReleasedByVm = DomainEvent<'CommitReleasedByVm', { commit_id: string; vm_id: string; released_at: string }>;
/**
 * A tag (a commit tag or a repository tag) points at the commit: appended before the tag is created
 * or moved here, so a deletion and a tag never both win; it holds the commit until released.
 */
export type CommitTagged = DomainEvent<'CommitTagged', { commit_id: string; tag_id: string; tag: string; tag_stream: string; tagged_at: string }>;
/** The tag was deleted or moved away. */
export type CommitUntagged = DomainEvent<'CommitUntagged', { commit_id: string; tag_id: string; untagged_at: string }>;
export type CommitEvent = CommitCreated | CommitUpdated | CommitDeleted | CommitUsedByVm | CommitReleasedByVm | CommitTagged | CommitUntagged;
export const COMMIT_EVENT_TYPES = eventTypes<CommitEvent>()(
  'CommitCreated',
  'CommitUpdated',
  'CommitDeleted',
  'CommitUsedByVm',
  'CommitReleasedByVm',
  'CommitTagged',
  'CommitUntagged',
);
