/** Collection `domains`: one document per custom domain in use, `_id` = domain id; removed with it. */
export const DOMAINS_COLLECTION = 'domains';

export interface DomainDocument {
  _id: string;
  domain_id: string;
  /** The host name, lowercase: what the edge looks a Host header or SNI up by. */
  domain: string;
  vm_id: string;
  org_id: string;
  created_at: string;
  [field: string]: unknown;
}
