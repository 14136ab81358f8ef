import type { Role } from '@arbor/domain';

/** The authenticated caller: an API key of a member of an org, acting as that member. */
export interface Principal {
  key_id: string;
  org_id: string;
  /** The member the key acts as. */
  user_id: string;
  /** Their role in the org, as of at most ApiKeyAuthenticator's cache time ago. */
  role: Role;
  /** Operators read every org's events in the audit feed. */
  is_operator: boolean;
}
