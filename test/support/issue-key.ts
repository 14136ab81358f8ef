import { randomUUID } from 'node:crypto';
import { AggregateRepository, createOrg, newCommandContext } from '@arbor/application';
import { ApiKey, generateApiKey } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';

/** A new org (named `org-<8 hex>`, or `name`) with one (non-operator) key, written to the log the way key issuing does. */
export async function issueKeyForNewOrg(store: EventStore, name?: string): Promise<{ key: string; key_id: string; org_id: string; org_name: string }> {
  const aggregates = new AggregateRepository(store);
  const org_id = randomUUID();
  const org_name = name ?? `org-${org_id.slice(0, 8)}`;
  const { key, key_id, secret_sha256 } = generateApiKey();
  const now = new Date().toISOString();
  await createOrg(aggregates, { org_id, name: org_name }, newCommandContext({ org_id, actor_key_id: null }));
  const issue = { type: 'IssueApiKey' as const, key_id, org_id, label: 'test', secret_sha256, is_operator: false, now };
  await aggregates.handle(ApiKey, key_id, issue, newCommandContext({ org_id, actor_key_id: null, command_id: randomUUID() }));
  return { key, key_id, org_id, org_name };
}
