/** Collection `orgs`: one document per org (names never change). */
export const ORGS_COLLECTION = 'orgs';

export interface OrgDocument {
  _id: string;
  org_id: string;
  name: string;
  created_at: string;
  [field: string]: unknown;
}
