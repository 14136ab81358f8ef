import type { PublicRepositoryInfoDto, RepoTagInfoDto, RepositoryInfoDto } from '@arbor/contracts';
import type { RepoTagDocument, RepositoryDocument } from '@arbor/read-models';

export function presentRepository(doc: RepositoryDocument): RepositoryInfoDto {
  return { repo_id: doc.repo_id, name: doc.name, is_public: doc.is_public, created_at: doc.created_at, description: doc.description };
}

export function presentPublicRepository(doc: RepositoryDocument): PublicRepositoryInfoDto {
  return { repo_id: doc.repo_id, org_name: doc.org_name, name: doc.name, full_name: `${doc.org_name}/${doc.name}`, created_at: doc.created_at, description: doc.description };
}

export function presentRepoTag(doc: RepoTagDocument): RepoTagInfoDto {
  return {
    tag_id: doc.tag_id,
    tag_name: doc.tag_name,
    reference: `${doc.repo_name}:${doc.tag_name}`,
    commit_id: doc.commit_id,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    description: doc.description,
  };
}
