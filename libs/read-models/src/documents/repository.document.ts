/** Collection `repositories`: one document per live repository, `_id` = `<org>:<name>`. */
export const REPOSITORIES_COLLECTION = 'repositories';

export interface RepositoryDocument {
  _id: string;
  repo_id: string;
  org_id: string;
  /** The owning org's name: public repositories are addressed `<org_name>/<name>`. */
  org_name: string;
  name: string;
  description: string | null;
  is_public: boolean;
  created_at: string;
  [field: string]: unknown;
}

export const repositoryKey = (org_id: string, name: string) => `${org_id}:${name}`;

/** Collection `repo_tags`: one document per live repository tag, `_id` = `<repo_id>:<tag_name>`. */
export const REPO_TAGS_COLLECTION = 'repo_tags';

export interface RepoTagDocument {
  _id: string;
  tag_id: string;
  repo_id: string;
  org_id: string;
  repo_name: string;
  tag_name: string;
  commit_id: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

export const repoTagKey = (repo_id: string, tag_name: string) => `${repo_id}:${tag_name}`;
