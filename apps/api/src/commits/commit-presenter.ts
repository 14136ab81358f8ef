import type { CommitInfoDto, VmCommitEntityDto } from '@arbor/contracts';
import type { CommitDocument } from '@arbor/read-models';

export function presentCommit(doc: CommitDocument): CommitInfoDto {
  return {
    commit_id: doc.commit_id,
    owner_id: doc.owner_id,
    name: doc.name,
    created_at: doc.created_at,
    is_public: doc.is_public,
    description: doc.description,
    parent_vm_id: doc.parent_vm_id,
    grandparent_commit_id: doc.grandparent_commit_id,
    includes_memory: doc.includes_memory,
  };
}

export function presentCommitEntity(doc: CommitDocument): VmCommitEntityDto {
  const { commit_id, ...rest } = presentCommit(doc);
  return { id: commit_id, ...rest };
}
