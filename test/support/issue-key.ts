import { randomUUID } from 'node:crypto';
import { AggregateRepository, createOrg, directRunner, newCommandContext } from '@arbor/application';
import { ApiKey, generateApiKey, Org, User, userIdOf, type Role } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';

export interface IssuedTestKey {
  key: string;
  key_id: string;
  org_id: string;
  user_id: string;
  email: string;
}

/** A user (`<name>@example.test`, registered unverified, as an invitation leaves them) and a (non-operator) key of theirs in `org_id`. */
async function issueKey(aggregates: AggregateRepository, org_id: string, email: string): Promise<IssuedTestKey> {
  const user_id = userIdOf(email);
  const now = new Date().toISOString();
  const { key, key_id, secret_sha256 } = generateApiKey();
  await aggregates.handle(User, user_id, { type: 'RegisterUser', user_id, email, now }, newCommandContext({ org_id, actor_key_id: null }));
  const issue = { type: 'IssueApiKey' as const, key_id, org_id, user_id, label: 'test key', secret_sha256, is_operator: false, now };
  await aggregates.handle(ApiKey, key_id, issue, newCommandContext({ org_id, actor_key_id: null }));
  return { key, key_id, org_id, user_id, email };
}

/** A new org (named `org-<8 hex>`, or `name`) whose owner has one (non-operator) key, written to the log the way key issuing does. */
export async function issueKeyForNewOrg(store: EventStore, name?: string): Promise<IssuedTestKey & { org_name: string }> {
  const aggregates = new AggregateRepository(store);
  const org_id = randomUUID();
  const org_name = name ?? `org-${org_id.slice(0, 8)}`;
  const email = `owner-${org_id.slice(0, 8)}@example.test`;
  await createOrg(directRunner(aggregates), { org_id, name: org_name, owner_user_id: userIdOf(email) }, newCommandContext({ org_id, actor_key_id: null }));
  return { ...(await issueKey(aggregates, org_id, email)), org_name };
}

/** Another member of an existing org, with `role`, and a key of theirs. */
export async function issueKeyForMember(store: EventStore, org_id: string, role: Role): Promise<IssuedTestKey> {
  const aggregates = new AggregateRepository(store);
  const email = `${role}-${randomUUID().slice(0, 8)}@example.test`;
  await aggregates.handle(Org, org_id, { type: 'AddMember', user_id: userIdOf(email), role, now: new Date().toISOString() }, newCommandContext({ org_id, actor_key_id: null }));
  return issueKey(aggregates, org_id, email);
}
