import { EnvVars } from '@arbor/domain';
import type { AggregateRepository } from './aggregate-repository';
import { withoutSealedValues } from './secrets/event-secrets';

/**
 * The env vars of an owner (an API key: the `owner_id` of what it creates), as its own stream
 * `envvars-<owner>` has them now: what GET /env_vars answers and what every VM the owner creates
 * gets in its /etc/environment. Read from the log, not a read model, so a VM asked for right
 * after a PUT boots with the new set. Values sealed with a key shredded since are gone.
 */
export async function envVarsOf(aggregates: AggregateRepository, owner_id: string): Promise<Record<string, string>> {
  return withoutSealedValues((await aggregates.load(EnvVars, owner_id)).state.vars);
}
