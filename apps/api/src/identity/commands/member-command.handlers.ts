import { Inject, Logger } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ARBOR_CONFIG, Identity, stepContext, versUrlOf, type ArborConfig } from '@arbor/application';
import type { OrgMemberDto } from '@arbor/contracts';
import { conflict, invalid, isRole, notFound, requireEmail, requireMembershipChange, userIdOf, type Role } from '@arbor/domain';
import { ApiKeyAuthenticator } from '../../auth/api-key-authenticator';
import { Mailer } from '../../mail/mailer';
import { AccountReadModel } from '../account-read-model';
import { invitationMail } from '../invitation-mail';
import { ChangeMemberRoleCommand, InviteMemberCommand, RemoveMemberCommand } from './member-commands';

function requireRole(raw: unknown): Role {
  if (!isRole(raw)) throw invalid('role must be owner, admin or member');
  return raw;
}

@CommandHandler(InviteMemberCommand)
export class InviteMemberHandler implements ICommandHandler<InviteMemberCommand> {
  private readonly logger = new Logger('members');

  constructor(
    private readonly identity: Identity,
    private readonly account: AccountReadModel,
    private readonly mailer: Mailer,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  /**
   * The address becomes a member at once (its user registered, unverified, if new); they sign in
   * with `vers login --git`, which proves the address. The invitation mail is a courtesy: a
   * member is added whether or not it could be sent (the failure is logged).
   */
  async execute({ context, email: rawEmail, role: rawRole }: InviteMemberCommand): Promise<OrgMemberDto> {
    const { org_id } = context.principal;
    const email = requireEmail(rawEmail);
    const role = requireRole(rawRole ?? 'member');
    const user_id = userIdOf(email);
    requireMembershipChange(context.principal, { target_user_id: user_id, from: null, to: role });
    const current = await this.identity.roleOf(org_id, user_id);
    if (current) throw conflict(`${email} is a member of the org already (${current})`);
    await this.identity.registerUser(email, context.command);
    await this.identity.addMember(org_id, user_id, role, stepContext(context.command, 'member'));
    const [org, inviter] = await Promise.all([this.account.org(org_id), this.account.user(context.principal.user_id)]);
    const mail = invitationMail({ email, role, org_name: org.name, inviter: inviter?.email ?? null, public_url: this.config.shellAuth.publicUrl, vers_url: versUrlOf(this.config.shellAuth.publicUrl, this.config.edge.domain) });
    await this.mailer.send(mail).catch((error: Error) => this.logger.warn(`the invitation to ${email} could not be mailed (they are a member all the same): ${error.message}`));
    return this.account.member(org_id, user_id);
  }
}

@CommandHandler(ChangeMemberRoleCommand)
export class ChangeMemberRoleHandler implements ICommandHandler<ChangeMemberRoleCommand> {
  constructor(
    private readonly identity: Identity,
    private readonly account: AccountReadModel,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async execute({ context, user_id, role: rawRole }: ChangeMemberRoleCommand): Promise<OrgMemberDto> {
    const { org_id } = context.principal;
    const role = requireRole(rawRole);
    const current = await this.identity.roleOf(org_id, user_id);
    if (!current) throw notFound('member');
    requireMembershipChange(context.principal, { target_user_id: user_id, from: current, to: role });
    await this.identity.changeRole(org_id, user_id, role, context.command);
    this.authenticator.forget();
    return this.account.member(org_id, user_id);
  }
}

@CommandHandler(RemoveMemberCommand)
export class RemoveMemberHandler implements ICommandHandler<RemoveMemberCommand> {
  constructor(
    private readonly identity: Identity,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async execute({ context, user_id }: RemoveMemberCommand): Promise<void> {
    const { org_id } = context.principal;
    const current = await this.identity.roleOf(org_id, user_id);
    if (!current) throw notFound('member');
    requireMembershipChange(context.principal, { target_user_id: user_id, from: current, to: null });
    await this.identity.removeMember(org_id, user_id, context.command);
    this.authenticator.forget();
  }
}
