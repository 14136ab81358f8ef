import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `envvars-<owner id>`: the environment variables of a key's owner (today the API key
 * itself, the `owner_id` of what it creates), written into /etc/environment of every VM the
 * owner creates from then on; running VMs keep what they booted with.
 */
export type EnvVarsSet = DomainEvent<
  'EnvVarsSet',
  {
    owner_id: string;
    /**
     * The variables set. Each value is sealed in the log with the org's key (the names stay
     * readable); the feed shows them as [redacted].
     * @sealed "values"
     */
    vars: Record<string, string>;
    replace: boolean;
    set_at: string;
  }
>;
export type EnvVarDeleted = DomainEvent<'EnvVarDeleted', { owner_id: string; key: string; deleted_at: string }>;
export type EnvVarsEvent = EnvVarsSet | EnvVarDeleted;
export const ENV_VARS_EVENT_TYPES = eventTypes<EnvVarsEvent>()('EnvVarsSet', 'EnvVarDeleted');
