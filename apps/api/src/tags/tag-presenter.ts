import type { TagInfoDto } from '@arbor/contracts';
import type { CommitTagDocument } from '@arbor/read-models';

export function presentTag(doc: CommitTagDocument): TagInfoDto {
  return {
    tag_id: doc.tag_id,
    tag_name: doc.tag_name,
    commit_id: doc.commit_id,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    description: doc.description,
  };
}
