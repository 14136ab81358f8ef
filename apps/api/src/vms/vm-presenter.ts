import type { VmDto, VmMetadataResponseDto } from '@arbor/contracts';
import type { VmDocument } from '@arbor/read-models';
import type { CommitNaming } from '../commits/commit-names';

export function presentVm(doc: VmDocument): VmDto {
  return { vm_id: doc.vm_id, owner_id: doc.owner_id, created_at: doc.created_at, state: doc.state, labels: doc.labels ?? null };
}

/** A VM's metadata as its org sees it: the commit it started from named by `name` (CommitNames). */
export function presentVmMetadata(doc: VmDocument, name: CommitNaming): VmMetadataResponseDto {
  return {
    vm_id: doc.vm_id,
    owner_id: doc.owner_id,
    created_at: doc.created_at,
    state: doc.state,
    ip: doc.ip,
    parent_commit_id: doc.parent_commit_id === null ? null : name(doc.parent_commit_id),
    grandparent_vm_id: doc.grandparent_vm_id,
    deleted_at: doc.deleted_at,
  };
}
