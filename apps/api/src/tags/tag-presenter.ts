import type { TagInfoDto } from '@arbor/contracts';
import type { CommitTagDocument } from '@arbor/read-models';
import type { CommitNaming } from '../commits/commit-names';

/** A tag as its org sees it: its commit named by `name` (CommitNames). */
export function presentTag(doc: CommitTagDocument, name: CommitNaming): TagInfoDto {
  return {
    tag_id: doc.tag_id,
    tag_name: doc.tag_name,
    commit_id: name(doc.commit_id),
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    description: doc.description,
  };
}
