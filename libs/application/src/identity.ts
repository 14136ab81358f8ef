import {
  ApiKey,
  conflict,
  deterministicUuid,
  generateApiKey,
  Org,
  requireApiKeyLabel,
  requireName,
  User,
  userIdOf,
  type Role,
} from '@arbor/domain';
import {
  API_KEYS_COLLECTION,
  ORG_MEMBERS_COLLECTION,
  ORGS_COLLECTION,
  USERS_COLLECTION,
  type ApiKeyDocument,
  type OrgDocument,
  type OrgMemberDocument,
  type ReadModelStore,
  type UserDocument,
} from '@arbor/read-models';
import type { AggregateRepository } from './aggregate-repository';
import { stepContext, type CommandContext } from './command-context';
import type { CommandRunner } from './command-runner';
import { createOrg } from './orgs';

/** A key as made: the key itself is in this answer only (only its hash is kept). */
export interface IssuedApiKey {
  api_key: string;
  api_key_id: string;
  org_id: string;
  user_id: string;
  label: string;
  created_at: string;
}

/** One of a user's orgs, with their role there. */
export interface Membership {
  org_id: string;
  name: string;
  role: Role;
  added_at: string;
}

/** One member of an org. */
export interface Member {
  user_id: string;
  email: string | null;
  email_verified: boolean;
  role: Role;
  added_at: string;
}

/**
 * People, orgs and keys, as the api's endpoints, the shell-auth flow, the operator command and the
 * first start all change them: through the deciders of User, Org and ApiKey. Who may ask for a
 * change is the caller's business (the role rule, org-roles.ts); this only carries it out.
 * Lists come from the read models.
 */
export class Identity {
  constructor(
    private readonly runner: CommandRunner,
    private readonly aggregates: AggregateRepository,
    private readonly readModels: ReadModelStore,
  ) {}

  /** The user of an address, registered (not yet verified) if they are new: an invitation. */
  async registerUser(email: string, context: CommandContext): Promise<string> {
    const user_id = userIdOf(email);
    await this.runner.run(User, user_id, { type: 'RegisterUser', user_id, email, now: new Date().toISOString() }, stepContext(context, 'user', user_id));
    return user_id;
  }

  /** A new org under a unique name, with its first owner (409 for a taken name). */
  async createOrg(name: string, owner_user_id: string, context: CommandContext, org_id = deterministicUuid(context.command_id, 'org')): Promise<{ org_id: string; name: string }> {
    requireName('org name', name);
    await createOrg(this.runner, { org_id, name, owner_user_id }, context);
    return { org_id, name };
  }

  async addMember(org_id: string, user_id: string, role: Role, context: CommandContext): Promise<void> {
    await this.runner.run(Org, org_id, { type: 'AddMember', user_id, role, now: new Date().toISOString() }, context);
  }

  async changeRole(org_id: string, user_id: string, role: Role, context: CommandContext): Promise<void> {
    await this.runner.run(Org, org_id, { type: 'ChangeMemberRole', user_id, role, now: new Date().toISOString() }, context);
  }

  /**
   * Removes a member, then revokes their keys in the org: they stop working with the removal
   * already (a key acts only while its user is a member), the revocations make it last should
   * the user be added again.
   */
  async removeMember(org_id: string, user_id: string, context: CommandContext): Promise<void> {
    await this.runner.run(Org, org_id, { type: 'RemoveMember', user_id, now: new Date().toISOString() }, context);
    const keys = await this.readModels.find<ApiKeyDocument>(API_KEYS_COLLECTION, { org_id, user_id, revoked_at: null });
    for (const key of keys) await this.revokeKey(key.key_id, stepContext(context, 'revoke', key.key_id));
  }

  /**
   * A new key for a member of an org. Its id derives from the command id: a retry of the same
   * request (X-Idempotency-Key) makes no second key, and cannot show the first one's secret
   * again (only its hash is kept), so it is a 409 that says so.
   */
  async issueKey(key: { org_id: string; user_id: string; label: string; is_operator?: boolean }, context: CommandContext): Promise<IssuedApiKey> {
    const label = requireApiKeyLabel(key.label);
    const key_id = deterministicUuid(context.command_id, 'api-key');
    const { key: api_key, secret_sha256 } = generateApiKey(key_id);
    const now = new Date().toISOString();
    const command = { type: 'IssueApiKey' as const, key_id, org_id: key.org_id, user_id: key.user_id, label, secret_sha256, is_operator: key.is_operator ?? false, now };
    const issued = await this.runner.run(ApiKey, key_id, command, context);
    if (issued.replayed) throw conflict(`API key ${key_id} was made by an earlier attempt of this request; its secret was shown then only: revoke it and make another`);
    return { api_key, api_key_id: key_id, org_id: key.org_id, user_id: key.user_id, label, created_at: now };
  }

  async revokeKey(key_id: string, context: CommandContext): Promise<void> {
    await this.runner.run(ApiKey, key_id, { type: 'RevokeApiKey', now: new Date().toISOString() }, context);
  }

  /** A user's role in an org, from the org's own stream (null: not a member). */
  async roleOf(org_id: string, user_id: string): Promise<Role | null> {
    return (await this.aggregates.load(Org, org_id)).state.members[user_id] ?? null;
  }

  /** A user's orgs, the oldest membership first (the shell-auth default org). */
  async orgsOf(user_id: string): Promise<Membership[]> {
    const memberships = await this.readModels.find<OrgMemberDocument>(ORG_MEMBERS_COLLECTION, { user_id }, { sort: { added_at: 1, _id: 1 } });
    const orgs = await Promise.all(memberships.map((m) => this.readModels.findOne<OrgDocument>(ORGS_COLLECTION, { _id: m.org_id })));
    return memberships.map((m, i) => ({ org_id: m.org_id, name: orgs[i]?.name ?? m.org_id, role: m.role, added_at: m.added_at }));
  }

  /** An org's members, the oldest first. */
  async membersOf(org_id: string): Promise<Member[]> {
    const memberships = await this.readModels.find<OrgMemberDocument>(ORG_MEMBERS_COLLECTION, { org_id }, { sort: { added_at: 1, _id: 1 } });
    const users = await Promise.all(memberships.map((m) => this.readModels.findOne<UserDocument>(USERS_COLLECTION, { _id: m.user_id })));
    return memberships.map((m, i) => ({ user_id: m.user_id, email: users[i]?.email ?? null, email_verified: users[i]?.email_verified ?? false, role: m.role, added_at: m.added_at }));
  }
}
