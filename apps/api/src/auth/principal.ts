/** The authenticated caller: an API key of an org. */
export interface Principal {
  key_id: string;
  org_id: string;
  /** Operators read every org's events in the audit feed. */
  is_operator: boolean;
}
