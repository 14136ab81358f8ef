import type { Role, SshKeyBound } from '@arbor/domain';

/** Collection `users`: one document per user. */
export const USERS_COLLECTION = 'users';

export interface UserDocument {
  _id: string;
  user_id: string;
  /** Null for the first start's admin (a user without an address). */
  email: string | null;
  email_verified: boolean;
  registered_at: string;
  verified_at: string | null;
  [field: string]: unknown;
}

/** Collection `org_members`: one document per membership, `_id` = `<org>:<user>`. */
export const ORG_MEMBERS_COLLECTION = 'org_members';

export interface OrgMemberDocument {
  _id: string;
  org_id: string;
  user_id: string;
  role: Role;
  added_at: string;
  [field: string]: unknown;
}

export const orgMemberKey = (org_id: string, user_id: string) => `${org_id}:${user_id}`;

/** Collection `ssh_keys`: one document per bound SSH key, `_id` = its `SHA256:` fingerprint. */
export const SSH_KEYS_COLLECTION = 'ssh_keys';

/** The binding as SshKeyBound records it, under its fingerprint, with the last sign-in confirmed with the key. */
export type SshKeyDocument = SshKeyBound['data'] & {
  _id: string;
  last_seen_at: string | null;
  [field: string]: unknown;
};

/** Collection `api_keys`: one document per API key ever issued (revoked ones keep `revoked_at`). */
export const API_KEYS_COLLECTION = 'api_keys';

export interface ApiKeyDocument {
  _id: string;
  key_id: string;
  org_id: string;
  user_id: string;
  label: string;
  is_operator: boolean;
  created_at: string;
  revoked_at: string | null;
  /** The first use in the last hour the key was used in (ApiKeyUsed, one an hour), or null if never. */
  last_used_at: string | null;
  [field: string]: unknown;
}
