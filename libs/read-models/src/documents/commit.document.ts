import type { VmConfig } from '@arbor/domain';

/** Collection `commits`: one document per commit, kept by the projector. */
export const COMMITS_COLLECTION = 'commits';

export interface CommitDocument {
  _id: string;
  commit_id: string;
  org_id: string;
  owner_id: string;
  name: string;
  description: string | null;
  is_public: boolean;
  created_at: string;
  parent_vm_id: string;
  grandparent_commit_id: string | null;
  includes_memory: boolean;
  config: VmConfig;
  deleted_at: string | null;
  [field: string]: unknown;
}

/**
 * Collection `commit_ancestors`: each commit's ancestor ids, nearest first (its
 * grandparent_commit_id, then that commit's, …), so the parent chain is one lookup of ids and one
 * query for the commits. Kept apart from `commits` so reading a chain of commits (or a page of
 * them) does not also load every one's own path: that would be quadratic in the depth.
 */
export const COMMIT_ANCESTORS_COLLECTION = 'commit_ancestors';

export interface CommitAncestorsDocument {
  _id: string;
  ancestor_ids: string[];
  [field: string]: unknown;
}

/**
 * Collection `commit_names`: an org's own name for a commit whose id in the log differs from it
 * (a client-chosen id: see `orgCommitId`), `_id` = the id in the log. The API shows the org its
 * own names; every other org sees the id in the log. A name never changes once reserved.
 */
export const COMMIT_NAMES_COLLECTION = 'commit_names';

export interface CommitNameDocument {
  _id: string;
  org_id: string;
  /** The id as the org chose it. */
  commit_id: string;
  [field: string]: unknown;
}
