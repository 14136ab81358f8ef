import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext } from '@arbor/application';
import { ApiKey, generateApiKey, Org } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';

/** A new org with one (non-operator) key, written to the log the way key issuing does. */
export async function issueKeyForNewOrg(store: EventStore): Promise<{ key: string; key_id: string; org_id: string }> {
  const aggregates = new AggregateRepository(store);
  const org_id = randomUUID();
  const { key, key_id, secret_sha256 } = generateApiKey();
  const now = new Date().toISOString();
  await aggregates.handle(Org, org_id, { type: 'CreateOrg', org_id, name: `org-${org_id.slice(0, 8)}`, now }, newCommandContext({ org_id, actor_key_id: null }));
  const issue = { type: 'IssueApiKey' as const, key_id, org_id, label: 'test', secret_sha256, is_operator: false, now };
  await aggregates.handle(ApiKey, key_id, issue, newCommandContext({ org_id, actor_key_id: null, command_id: randomUUID() }));
  return { key, key_id, org_id };
}
