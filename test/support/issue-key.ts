import { randomUUID } from 'node:crypto';
import { generateApiKey, streams } from '@arbor/domain';
import { newCommandContext, toNewEvents } from '@arbor/application';
import type { EventStore } from '@arbor/event-store';

/** A new org with one (non-operator) key, written to the log the way key issuing does. */
export async function issueKeyForNewOrg(store: EventStore): Promise<{ key: string; key_id: string; org_id: string }> {
  const org_id = randomUUID();
  const { key, key_id, secret_sha256 } = generateApiKey();
  const context = newCommandContext({ org_id, actor_key_id: null });
  const now = new Date().toISOString();
  await store.append(streams.org(org_id), toNewEvents([{ type: 'OrgCreated', data: { org_id, name: `org-${org_id.slice(0, 8)}`, created_at: now } }], context), 'no_stream');
  await store.append(
    streams.apiKey(key_id),
    toNewEvents([{ type: 'ApiKeyIssued', data: { key_id, org_id, label: 'test', secret_sha256, is_operator: false, issued_at: now } }], { ...context, command_id: randomUUID() }),
    'no_stream',
  );
  return { key, key_id, org_id };
}
