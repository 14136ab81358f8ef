import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { AggregateRepository, ARBOR_CONFIG, newCommandContext, type ArborConfig } from '@arbor/application';
import type { ShellAuthStartResponseDto } from '@arbor/contracts';
import { aliasBaseOf, conflict, forbidden, generateSignInToken, invalid, SignIn, SshKey, SSH_KEY_TAKEN, User, userIdOf } from '@arbor/domain';
import { HttpError } from '../../http/http-error';
import { Mailer } from '../../mail/mailer';
import { ClientLimits } from '../client-limits';
import { signInSubjectOf } from '../sign-in-lookup';
import { signInMail } from '../sign-in-mail';
import { StartSignInCommand } from './start-sign-in.command';

const MAX_NOTE_LENGTH = 500;

function noteOf(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || raw.length > MAX_NOTE_LENGTH) throw invalid(`body must be text of at most ${MAX_NOTE_LENGTH} characters`);
  return raw.trim() || null;
}

/**
 * Starts a sign-in: checks the address and the key (400), the alias rule (403), that the key is
 * not another account's (409), the limits (429), records the request (only the hash of the
 * link's token) and mails the link. `already_verified` is always false: an address and a public
 * key are no secret, so every sign-in proves the address again by its link.
 */
@CommandHandler(StartSignInCommand)
export class StartSignInHandler implements ICommandHandler<StartSignInCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly limits: ClientLimits,
    private readonly mailer: Mailer,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  async execute({ body, client_address }: StartSignInCommand): Promise<ShellAuthStartResponseDto> {
    await this.limits.startSignIn(client_address);
    const { email, user_id, key } = signInSubjectOf(body);
    const note = noteOf(body.body);
    await this.requireAliasBase(email);
    const binding = (await this.aggregates.load(SshKey, key.fingerprint_hex)).state.binding;
    if (binding && binding.user_id !== user_id) throw conflict(SSH_KEY_TAKEN);
    const is_new_user = (await this.aggregates.load(User, user_id)).state.user_id === null;
    const { signup, linkTtlMs, publicUrl } = this.config.shellAuth;
    if (is_new_user && signup === 'invite') throw forbidden(`sign-up on this Arbor is by invitation: ask an owner or admin of an org to invite ${email}`);

    const request_id = randomUUID();
    const { token, token_sha256 } = generateSignInToken(user_id);
    const now = new Date();
    const request = {
      request_id,
      user_id,
      email,
      ssh_key_fingerprint: key.fingerprint,
      ssh_public_key: key.public_key,
      note,
      client_address,
      token_sha256,
      expires_at: new Date(now.getTime() + linkTtlMs).toISOString(),
    };
    const context = newCommandContext({ command_id: request_id, org_id: null, actor_key_id: null });
    await this.aggregates.handle(SignIn, user_id, { type: 'RequestSignIn', ...request, now: now.toISOString() }, context);

    const link = `${publicUrl}/arbor/v1/shell-auth/verify?token=${token}`;
    const mail = signInMail({ email, link, is_new_user, ssh_key_fingerprint: key.fingerprint, note, client_address, ttl_minutes: Math.round(linkTtlMs / 60_000) });
    try {
      await this.mailer.send(mail);
    } catch (error) {
      throw new HttpError(503, `could not send the sign-in e-mail (try again later): ${(error as Error).message}`);
    }
    return { success: true, user_id, email, is_new_user, nonce: request_id, ssh_public_key: key.public_key, already_verified: false };
  }

  /** `a+x@…` signs in only once `a@…` is an account with a verified address. */
  private async requireAliasBase(email: string): Promise<void> {
    const base = aliasBaseOf(email);
    if (base === null) return;
    const user = (await this.aggregates.load(User, userIdOf(base))).state;
    if (!user.email_verified) throw forbidden(`${email} is an alias of ${base}: sign in with ${base} first (an alias needs its base address's account, verified)`);
  }
}
