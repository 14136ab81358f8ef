import type { VmDto, VmMetadataResponseDto } from '@arbor/contracts';
import type { VmDocument } from '@arbor/read-models';

export function presentVm(doc: VmDocument): VmDto {
  return { vm_id: doc.vm_id, owner_id: doc.owner_id, created_at: doc.created_at, state: doc.state, labels: doc.labels ?? null };
}

export function presentVmMetadata(doc: VmDocument): VmMetadataResponseDto {
  return {
    vm_id: doc.vm_id,
    owner_id: doc.owner_id,
    created_at: doc.created_at,
    state: doc.state,
    ip: doc.ip,
    parent_commit_id: doc.parent_commit_id,
    grandparent_vm_id: doc.grandparent_vm_id,
    deleted_at: doc.deleted_at,
  };
}
