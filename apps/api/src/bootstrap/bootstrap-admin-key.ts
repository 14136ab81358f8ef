import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AggregateRepository, createOrg, directRunner, newCommandContext, stepContext, type ArborConfig, type CommandContext } from '@arbor/application';
import {
  ApiKey,
  DomainError,
  generateApiKey,
  hashSecret,
  keyHolderIdOf,
  Org,
  parseApiKey,
  requireName,
  SystemBootstrap,
  User,
  type SystemBootstrapped,
} from '@arbor/domain';
import { writeFileAtomic } from '@arbor/durable-files';
import type { EventStore } from '@arbor/event-store';

export const ADMIN_KEY_FILE = 'admin-api-key';

export interface BootstrapResult {
  /** The admin key, only when this call created it (its file's path is printed, never the key). */
  created_key: string | null;
  key_file: string;
}

/**
 * On first start with an empty store: create an org and an operator admin key and keep it in
 * `<dataDir>/admin-api-key` (0600), whose path the start prints (never the key). The key acts as
 * the admin, a user without an e-mail address who owns the first org, made by the same events as
 * any other user, org and membership. The `system-bootstrap` reservation stream makes exactly one
 * process win even when several start together. The key is written to a pending file before
 * anything is appended, so a crash at any point leaves either nothing or a key that the next
 * start completes.
 */
export async function bootstrapAdminKey(store: EventStore, config: Pick<ArborConfig, 'dataDir' | 'orgName'>): Promise<BootstrapResult> {
  const { dataDir, orgName } = config;
  requireName('ARBOR_ORG_NAME', orgName);
  const aggregates = new AggregateRepository(store);
  await mkdir(dataDir, { recursive: true });
  const keyFile = join(dataDir, ADMIN_KEY_FILE);
  const pendingFile = `${keyFile}.pending`;
  const { state } = await aggregates.load(SystemBootstrap, 'bootstrap');
  if (state.bootstrapped) {
    await completePending(aggregates, pendingFile, keyFile, { ...state.bootstrapped, name: orgName });
    await giveFirstOrgItsOwner(aggregates, state.bootstrapped);
    return { created_key: null, key_file: keyFile };
  }

  const org_id = randomUUID();
  const { key, key_id } = generateApiKey();
  await writeFileAtomic(pendingFile, `${key}\n`, { mode: 0o600 });
  const context = newCommandContext({ command_id: key_id, org_id, actor_key_id: null });
  try {
    await aggregates.handle(SystemBootstrap, 'bootstrap', { type: 'BootstrapSystem', org_id, key_id, now: new Date().toISOString() }, context);
  } catch (error) {
    await rm(pendingFile, { force: true });
    if (error instanceof DomainError && error.kind === 'conflict') return { created_key: null, key_file: keyFile }; // another process won
    throw error;
  }
  await completePending(aggregates, pendingFile, keyFile, { org_id, key_id, name: orgName });
  return { created_key: key, key_file: keyFile };
}

/** Issues the org and the key of a pending key file (again, after a crash: a replay appends nothing), then keeps the key. */
async function completePending(aggregates: AggregateRepository, pendingFile: string, keyFile: string, first: Pick<SystemBootstrapped['data'], 'org_id' | 'key_id'> & { name: string }) {
  const { org_id, key_id, name } = first;
  const pending = await readFile(pendingFile, 'utf8').catch(() => null);
  const parsed = pending === null ? null : parseApiKey(pending.trim());
  if (!parsed || parsed.key_id !== key_id) return;
  const now = new Date().toISOString();
  const context = newCommandContext({ command_id: `bootstrap-${key_id}`, org_id, actor_key_id: null });
  const user_id = await registerAdmin(aggregates, key_id, context);
  await createOrg(directRunner(aggregates), { org_id, name, owner_user_id: user_id }, context);
  const issue = { type: 'IssueApiKey' as const, key_id, org_id, user_id, label: 'admin (bootstrap)', secret_sha256: hashSecret(parsed.secret), is_operator: true, now };
  await aggregates.handle(ApiKey, key_id, issue, { ...context, command_id: `bootstrap-key-${key_id}` });
  await writeFileAtomic(keyFile, pending!, { mode: 0o600 });
  await rm(pendingFile, { force: true });
}

/** The admin: the user the first start's key acts as (no e-mail address; its id follows from the key). */
async function registerAdmin(aggregates: AggregateRepository, key_id: string, context: CommandContext): Promise<string> {
  const user_id = keyHolderIdOf(key_id);
  await aggregates.handle(User, user_id, { type: 'RegisterUser', user_id, email: null, now: new Date().toISOString() }, stepContext(context, 'admin-user'));
  return user_id;
}

/**
 * An installation first started before orgs had members: its first org gets the admin as its
 * owner, by the same events as a new one. Only an org without any member: an admin an owner
 * removed on purpose stays removed.
 */
async function giveFirstOrgItsOwner(aggregates: AggregateRepository, first: SystemBootstrapped['data']): Promise<void> {
  const org = (await aggregates.load(Org, first.org_id)).state;
  if (org.org_id === null || Object.keys(org.members).length > 0) return;
  const context = newCommandContext({ command_id: `bootstrap-owner-${first.key_id}`, org_id: first.org_id, actor_key_id: null });
  const user_id = await registerAdmin(aggregates, first.key_id, context);
  await aggregates.handle(Org, first.org_id, { type: 'AddMember', user_id, role: 'owner', now: new Date().toISOString() }, context);
}
