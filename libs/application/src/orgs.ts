import { Org, OrgName } from '@arbor/domain';
import type { AggregateRepository } from './aggregate-repository';
import { stepContext, type CommandContext } from './command-context';

/**
 * Creates an org under a name no other org has: the name's reservation first (a taken name is a
 * 409 and nothing is created), then the org. Run again with the same context, it appends nothing.
 */
export async function createOrg(aggregates: AggregateRepository, org: { org_id: string; name: string }, context: CommandContext): Promise<void> {
  const now = new Date().toISOString();
  await aggregates.handle(OrgName, org.name, { type: 'ReserveOrgName', ...org, now }, stepContext(context, 'org-name'));
  await aggregates.handle(Org, org.org_id, { type: 'CreateOrg', ...org, now }, context);
}
