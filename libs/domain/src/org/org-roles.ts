import { forbidden } from '../shared/domain-error';

/**
 * The roles of an org's members, and the one rule of who may change what. Every write operation
 * of the API meets it (the api's ChangeGuard, ApiKeyAccess and the member endpoints apply it):
 *
 * - anything in the org (VMs, commits, tags, repositories, repository tags, webhooks, API keys)
 *   belongs to the user whose key created it;
 * - a `member` may create, and may change or delete what they own;
 * - an `owner` or `admin` may change or delete anything in the org;
 * - members are managed by owners and admins; only an owner makes, unmakes or removes an owner;
 *   anyone may leave; an org always keeps an owner (the org decider sees to that).
 *
 * Reading ends at the org's wall for every role: what another org has answers like what is missing.
 */
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Who acts: a user, with their role in the org the resource lives in. */
export interface Actor {
  user_id: string;
  role: Role;
}

const administers = (role: Role) => role === 'owner' || role === 'admin';

/** Whether `actor` may change or delete a resource of their org owned by `owner_user_id` (null: by nobody's key, e.g. the operator's). */
export function mayChange(actor: Actor, owner_user_id: string | null): boolean {
  return administers(actor.role) || (owner_user_id !== null && owner_user_id === actor.user_id);
}

/** The same, as a 403 naming what was refused (`what`: "vm", "commit", …). */
export function requireChange(actor: Actor, owner_user_id: string | null, what: string): void {
  if (!mayChange(actor, owner_user_id)) {
    throw forbidden(`Forbidden: this ${what} belongs to another member of the org; a member may change or delete only what they created (owners and admins: anything in the org)`);
  }
}

/** A change of `target`'s membership: their role before (null: not a member) and after (null: removed). */
export interface MembershipChange {
  target_user_id: string;
  from: Role | null;
  to: Role | null;
}

/** Whether `actor` may make this membership change (a 403 saying why otherwise). */
export function requireMembershipChange(actor: Actor, change: MembershipChange): void {
  if (change.to === null && change.target_user_id === actor.user_id) return; // leaving
  if (!administers(actor.role)) throw forbidden('Forbidden: only owners and admins manage the members of an org');
  if ((change.from === 'owner' || change.to === 'owner') && actor.role !== 'owner') throw forbidden('Forbidden: only an owner makes, unmakes or removes an owner');
}
