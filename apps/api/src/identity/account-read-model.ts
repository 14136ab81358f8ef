import { Inject, Injectable } from '@nestjs/common';
import { Identity } from '@arbor/application';
import type { ApiKeyInfoDto, OrgMemberDto } from '@arbor/contracts';
import { notFound } from '@arbor/domain';
import {
  API_KEYS_COLLECTION,
  ORGS_COLLECTION,
  READ_MODEL_STORE,
  USERS_COLLECTION,
  type ApiKeyDocument,
  type Filter,
  type OrgDocument,
  type ReadModelStore,
  type UserDocument,
} from '@arbor/read-models';
import type { Principal } from '../auth/principal';

/** Reads for the account endpoints: the caller's org, its members, the keys the caller may see. */
@Injectable()
export class AccountReadModel {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    private readonly identity: Identity,
  ) {}

  async org(org_id: string): Promise<OrgDocument> {
    const org = await this.readModels.findOne<OrgDocument>(ORGS_COLLECTION, { _id: org_id });
    if (!org) throw notFound('org');
    return org;
  }

  async user(user_id: string): Promise<UserDocument | null> {
    return this.readModels.findOne<UserDocument>(USERS_COLLECTION, { _id: user_id });
  }

  /** A member's own keys; an owner's or admin's: every key of the org. Oldest first. */
  async keys(principal: Principal): Promise<ApiKeyInfoDto[]> {
    const filter: Filter = principal.role === 'member' ? { org_id: principal.org_id, user_id: principal.user_id } : { org_id: principal.org_id };
    const keys = await this.readModels.find<ApiKeyDocument>(API_KEYS_COLLECTION, filter, { sort: { created_at: 1, _id: 1 } });
    const emails = new Map<string, string | null>();
    for (const user_id of new Set(keys.map((key) => key.user_id))) emails.set(user_id, (await this.user(user_id))?.email ?? null);
    return keys.map((key) => ({
      api_key_id: key.key_id,
      label: key.label,
      user_id: key.user_id,
      email: emails.get(key.user_id) ?? null,
      created_at: key.created_at,
      last_used_at: key.last_used_at,
      revoked_at: key.revoked_at,
      is_operator: key.is_operator,
    }));
  }

  async members(org_id: string): Promise<OrgMemberDto[]> {
    return this.identity.membersOf(org_id);
  }

  async member(org_id: string, user_id: string): Promise<OrgMemberDto> {
    const member = (await this.members(org_id)).find((m) => m.user_id === user_id);
    if (!member) throw notFound('member');
    return member;
  }
}
