/** Collection `commit_tags`: one document per live tag, `_id` = `<org>:<name>`. */
export const COMMIT_TAGS_COLLECTION = 'commit_tags';

export interface CommitTagDocument {
  _id: string;
  tag_id: string;
  org_id: string;
  tag_name: string;
  commit_id: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

export const commitTagKey = (org_id: string, tag_name: string) => `${org_id}:${tag_name}`;
