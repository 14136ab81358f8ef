import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Identity, newCommandContext, Operations, stepContext } from '@arbor/application';
import { deterministicUuid, DomainError, parseSshPublicKey, SignIn, SshKey, User, type SignInRequest } from '@arbor/domain';
import { createPersonalOrg, personalOrgIdOf } from '../personal-org';
import { linkPage, signInLinkOf } from '../sign-in-link';
import type { SignInPage } from '../sign-in-page';
import { ConfirmSignInCommand } from './confirm-sign-in.command';

/** What a refused link shows: by the kind of the sign-in decider's refusal. */
const REFUSAL_STATUS: Partial<Record<DomainError['kind'], number>> = { not_found: 404, conflict: 409, invalid: 410 };

/**
 * Follows a sign-in link, once: the address is verified (the user registered if new), the SSH
 * key bound to the account, and a new account gets an org of its own with the user as owner.
 * The steps after the link's own event derive their ids from the request, so a confirmation cut
 * short (a crash) is finished by following the link again, which then says it was used.
 */
@CommandHandler(ConfirmSignInCommand)
export class ConfirmSignInHandler implements ICommandHandler<ConfirmSignInCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly identity: Identity,
  ) {}

  async execute({ token }: ConfirmSignInCommand): Promise<SignInPage> {
    const link = await signInLinkOf(this.aggregates, token);
    if (!link.request) return linkPage(link);
    const { request, token_sha256 } = link;
    if (request.followed_at) {
      await this.finish(request);
      return linkPage(link);
    }
    try {
      await this.operations.run(SignIn, request.user_id, { type: 'FollowSignInLink', token_sha256, now: new Date().toISOString() }, await this.context(request, 'followed'));
    } catch (error) {
      if (!(error instanceof DomainError) || !REFUSAL_STATUS[error.kind]) throw error;
      return { status: REFUSAL_STATUS[error.kind]!, title: 'This sign-in link cannot be used', paragraphs: [error.message, 'Start a new sign-in from your terminal (vers login --git).'] };
    }
    const done = await this.finish(request);
    const paragraphs = [`You are signed in as ${request.email}. Go back to your terminal: the Vers CLI picks this up within a few seconds.`];
    if (done.org) paragraphs.push(`Your account and its org "${done.org.name}" were created; you are its owner.`);
    if (!done.key_bound) {
      return { status: 409, title: 'Address verified, SSH key refused', paragraphs: [`${request.email} is verified, but the SSH key ${request.ssh_key_fingerprint} is bound to another account, so no API key can be made with it. Sign in with another key.`] };
    }
    return { status: 200, title: 'Signed in', paragraphs };
  }

  /** The steps a followed link leads to, each appending nothing when done before. */
  private async finish(request: SignInRequest): Promise<{ key_bound: boolean; org: { org_id: string; name: string } | null }> {
    const { user_id, email } = request;
    const now = new Date().toISOString();
    const context = await this.context(request, 'confirmed');
    await this.operations.run(User, user_id, { type: 'VerifyEmail', user_id, email, now }, stepContext(context, 'email'));
    const key = parseSshPublicKey(request.ssh_public_key);
    const bind = { type: 'BindSshKey' as const, key_id: deterministicUuid('ssh-key', request.request_id), fingerprint: key.fingerprint, public_key: key.public_key, user_id, email, now };
    let key_bound = true;
    try {
      await this.operations.run(SshKey, key.fingerprint_hex, bind, stepContext(context, 'ssh-key'));
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'conflict')) throw error;
      key_bound = false;
    }
    const org = (await this.identity.orgsOf(user_id)).length === 0 ? await createPersonalOrg(this.identity, user_id, email, context) : null;
    return { key_bound, org };
  }

  /** The user's events show in the feed of their first org (a new account's: the org it is getting). */
  private async context(request: SignInRequest, step: string) {
    const org_id = (await this.identity.orgsOf(request.user_id))[0]?.org_id ?? personalOrgIdOf(request.user_id);
    return newCommandContext({ command_id: deterministicUuid('sign-in', request.request_id, step), correlation_id: request.request_id, org_id, actor_key_id: null });
  }
}
