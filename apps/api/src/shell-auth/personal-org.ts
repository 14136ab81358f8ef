import { Identity, type CommandContext } from '@arbor/application';
import { deterministicUuid, DomainError } from '@arbor/domain';

/** The org a new account gets, and the id it has (known before it exists, so the sign-up's events can carry it). */
export const personalOrgIdOf = (user_id: string) => deterministicUuid('personal-org', user_id);

/** `ada.lovelace+ci@example.com` → `ada.lovelace`: what an org name may hold, from the address's local part. */
export function orgNameBaseOf(email: string): string {
  const local = email.slice(0, email.indexOf('@')).split('+')[0];
  const base = local.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 40).toLowerCase();
  return base || 'org';
}

/**
 * A new account's own org, the user its owner, named after the address (`ada`, or `ada-2`, … when
 * taken, then `ada-<6 hex>`). Its command id derives from the user, so two sign-ins confirmed at
 * once make one org, and a user who later left every org gets none made again.
 */
export async function createPersonalOrg(identity: Identity, user_id: string, email: string, parent: CommandContext): Promise<{ org_id: string; name: string }> {
  const org_id = personalOrgIdOf(user_id);
  const context = { ...parent, command_id: deterministicUuid('personal-org', user_id), org_id };
  const base = orgNameBaseOf(email);
  const names = [base, ...[2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${base}-${n}`), `${base}-${user_id.slice(0, 6)}`];
  for (const name of names) {
    try {
      return await identity.createOrg(name, user_id, context, org_id);
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'conflict' && /is taken/.test(error.message))) throw error;
    }
  }
  throw new Error(`no free org name for ${email} (tried ${names.join(', ')})`);
}
