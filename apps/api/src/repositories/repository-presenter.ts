import type { PublicRepositoryInfoDto, RepoTagInfoDto, RepositoryInfoDto } from '@arbor/contracts';
import type { RepoTagDocument, RepositoryDocument } from '@arbor/read-models';
import type { CommitNaming } from '../commits/commit-names';

export function presentRepository(doc: RepositoryDocument): RepositoryInfoDto {
  return { repo_id: doc.repo_id, name: doc.name, is_public: doc.is_public, created_at: doc.created_at, description: doc.description };
}

export function presentPublicRepository(doc: RepositoryDocument): PublicRepositoryInfoDto {
  return { repo_id: doc.repo_id, org_name: doc.org_name, name: doc.name, full_name: `${doc.org_name}/${doc.name}`, created_at: doc.created_at, description: doc.description };
}

/** A repository tag as the reader sees it: its commit named by `name` (CommitNames; AS_IN_LOG for anyone but the repository's org). */
export function presentRepoTag(doc: RepoTagDocument, name: CommitNaming): RepoTagInfoDto {
  return {
    tag_id: doc.tag_id,
    tag_name: doc.tag_name,
    reference: `${doc.repo_name}:${doc.tag_name}`,
    commit_id: name(doc.commit_id),
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    description: doc.description,
  };
}
