import type { VmConfig } from '../../../domain/src';

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
  /** Every ancestor commit's id, nearest first (grandparent_commit_id, then its parent, …): the parent chain in one lookup. */
  ancestor_ids: string[];
  includes_memory: boolean;
  config: VmConfig;
  deleted_at: string | null;
  [field: string]: unknown;
}
