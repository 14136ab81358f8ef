import { Command } from '@nestjs/cqrs';
import type { OrgMemberDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /arbor/v1/org/members: adds an address to the caller's org (registering it if new) and mails them. */
export class InviteMemberCommand extends Command<OrgMemberDto> {
  constructor(
    readonly context: RequestContext,
    readonly email: unknown,
    readonly role: unknown,
  ) {
    super();
  }
}

/** PATCH /arbor/v1/org/members/{user_id}. */
export class ChangeMemberRoleCommand extends Command<OrgMemberDto> {
  constructor(
    readonly context: RequestContext,
    readonly user_id: string,
    readonly role: unknown,
  ) {
    super();
  }
}

/** DELETE /arbor/v1/org/members/{user_id}: their keys in the org stop working and are revoked. */
export class RemoveMemberCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly user_id: string,
  ) {
    super();
  }
}
