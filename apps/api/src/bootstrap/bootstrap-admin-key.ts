import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { generateApiKey, parseApiKey, streams, hashSecret } from '@arbor/domain';
import { newCommandContext, toNewEvents } from '@arbor/application';
import { type EventStore, WrongExpectedVersionError } from '@arbor/event-store';

export const ADMIN_KEY_FILE = 'admin-api-key';

export interface BootstrapResult {
  /** The admin key, only when this call created it (it is printed once). */
  created_key: string | null;
  key_file: string;
}

/**
 * On first start with an empty store: create an org and an operator admin key, print it once
 * and keep it in `<dataDir>/admin-api-key` (0600). The `system-bootstrap` reservation stream,
 * appended with "no stream", makes exactly one process win even when several start together.
 * The key is written to a pending file before anything is appended, so a crash at any point
 * leaves either nothing or a key that the next start completes.
 */
export async function bootstrapAdminKey(store: EventStore, dataDir: string): Promise<BootstrapResult> {
  mkdirSync(dataDir, { recursive: true });
  const keyFile = join(dataDir, ADMIN_KEY_FILE);
  const pendingFile = `${keyFile}.pending`;
  const existing = await store.readStream(streams.bootstrap());
  if (existing.length) {
    const { key_id, org_id } = existing[0].data as { key_id: string; org_id: string };
    await completePending(store, pendingFile, keyFile, key_id, org_id);
    return { created_key: null, key_file: keyFile };
  }

  const org_id = randomUUID();
  const { key, key_id } = generateApiKey();
  writeFileSync(pendingFile, key + '\n', { mode: 0o600 });
  const context = newCommandContext({ command_id: key_id, org_id, actor_key_id: null });
  try {
    await store.append(
      streams.bootstrap(),
      toNewEvents([{ type: 'SystemBootstrapped', data: { org_id, key_id, at: new Date().toISOString() } }], context),
      'no_stream',
    );
  } catch (error) {
    rmSync(pendingFile, { force: true });
    if (error instanceof WrongExpectedVersionError) return { created_key: null, key_file: keyFile };
    throw error;
  }
  await completePending(store, pendingFile, keyFile, key_id, org_id);
  return { created_key: key, key_file: keyFile };
}

async function completePending(store: EventStore, pendingFile: string, keyFile: string, key_id: string, org_id: string) {
  if (!existsSync(pendingFile)) return;
  const parsed = parseApiKey(readFileSync(pendingFile, 'utf8').trim());
  if (!parsed || parsed.key_id !== key_id) return;
  const now = new Date().toISOString();
  const context = newCommandContext({ command_id: `bootstrap-${key_id}`, org_id, actor_key_id: null });
  await appendOnce(store, streams.org(org_id), toNewEvents([{ type: 'OrgCreated', data: { org_id, name: 'default', created_at: now } }], context));
  await appendOnce(
    store,
    streams.apiKey(key_id),
    toNewEvents(
      [{ type: 'ApiKeyIssued', data: { key_id, org_id, label: 'admin (bootstrap)', secret_sha256: hashSecret(parsed.secret), is_operator: true, issued_at: now } }],
      { ...context, command_id: `bootstrap-key-${key_id}` },
    ),
  );
  mkdirSync(join(keyFile, '..'), { recursive: true });
  renameSync(pendingFile, keyFile);
  chmodSync(keyFile, 0o600);
}

async function appendOnce(store: EventStore, stream: string, events: Parameters<EventStore['append']>[1]) {
  try {
    await store.append(stream, events, 'no_stream');
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
  }
}
