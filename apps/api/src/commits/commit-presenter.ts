import type { CommitInfoDto, VmCommitEntityDto } from '@arbor/contracts';
import type { CommitDocument } from '@arbor/read-models';
import type { CommitNaming } from './commit-names';

/** A commit as the org reading it sees it: commit ids named by `name` (CommitNames). */
export function presentCommit(doc: CommitDocument, name: CommitNaming): CommitInfoDto {
  return {
    commit_id: name(doc.commit_id),
    owner_id: doc.owner_id,
    name: doc.name,
    created_at: doc.created_at,
    is_public: doc.is_public,
    description: doc.description,
    parent_vm_id: doc.parent_vm_id,
    grandparent_commit_id: doc.grandparent_commit_id === null ? null : name(doc.grandparent_commit_id),
    includes_memory: doc.includes_memory,
  };
}

export function presentCommitEntity(doc: CommitDocument, name: CommitNaming): VmCommitEntityDto {
  const { commit_id, ...rest } = presentCommit(doc, name);
  return { id: commit_id, ...rest };
}

/** The commit ids a page of commits shows, for CommitNames. */
export const commitIdsOf = (docs: CommitDocument[]) => docs.flatMap((doc) => [doc.commit_id, doc.grandparent_commit_id]);
