import { Org, OrgName } from '@arbor/domain';
import { stepContext, type CommandContext } from './command-context';
import type { CommandRunner } from './command-runner';

/**
 * Creates an org under a name no other org has, with its first owner: the name's reservation
 * first (a taken name is a 409 and nothing is created), then the org and its owner's membership.
 * Run again with the same context, it appends nothing.
 */
export async function createOrg(runner: CommandRunner, org: { org_id: string; name: string; owner_user_id: string }, context: CommandContext): Promise<void> {
  const now = new Date().toISOString();
  await runner.run(OrgName, org.name, { type: 'ReserveOrgName', name: org.name, org_id: org.org_id, now }, stepContext(context, 'org-name'));
  await runner.run(Org, org.org_id, { type: 'CreateOrg', ...org, now }, context);
}
