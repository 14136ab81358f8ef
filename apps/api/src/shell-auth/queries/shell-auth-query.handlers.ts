import { Inject } from '@nestjs/common';
import { QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { AggregateRepository, Identity } from '@arbor/application';
import { DomainError, parseSshPublicKey, SshKey, User } from '@arbor/domain';
import { READ_MODEL_STORE, SSH_KEYS_COLLECTION, type ReadModelStore, type SshKeyDocument } from '@arbor/read-models';
import { ClientLimits } from '../client-limits';
import { SignInLookup, signInSubjectOf } from '../sign-in-lookup';
import { linkPage, signInLinkOf } from '../sign-in-link';
import type { SignInPage } from '../sign-in-page';
import { PreviewSignInQuery, VerifyPublicKeyQuery, VerifySignInQuery, type ShellAuthAnswer } from './shell-auth.queries';

@QueryHandler(VerifySignInQuery)
export class VerifySignInHandler implements IQueryHandler<VerifySignInQuery> {
  constructor(
    private readonly lookup: SignInLookup,
    private readonly identity: Identity,
    private readonly limits: ClientLimits,
  ) {}

  /** 200 with the account's orgs once the link was followed; the contract's 401 body until then, saying why. */
  async execute({ body, client_address }: VerifySignInQuery): Promise<ShellAuthAnswer<object>> {
    await this.limits.check(client_address);
    const subject = signInSubjectOf(body);
    try {
      const { binding } = await this.lookup.verified(subject);
      const orgs = (await this.identity.orgsOf(subject.user_id)).map(({ org_id, name, role }) => ({ org_id, name, role }));
      return { status: 200, body: { verified: true, is_active: true, user_id: subject.user_id, key_id: binding.key_id, orgs } };
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'unauthorized')) throw error;
      return { status: 401, body: { verified: false, is_active: false, reason: error.message } };
    }
  }
}

@QueryHandler(VerifyPublicKeyQuery)
export class VerifyPublicKeyHandler implements IQueryHandler<VerifyPublicKeyQuery> {
  constructor(
    private readonly aggregates: AggregateRepository,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    private readonly limits: ClientLimits,
  ) {}

  /** The account the key is bound to (a key has one), or the contract's 404 body. */
  async execute({ body, client_address }: VerifyPublicKeyQuery): Promise<ShellAuthAnswer<object>> {
    await this.limits.check(client_address);
    const key = parseSshPublicKey((body as { ssh_public_key?: unknown } | null)?.ssh_public_key);
    const binding = (await this.aggregates.load(SshKey, key.fingerprint_hex)).state.binding;
    if (!binding) return { status: 404, body: { verified: false, reason: 'no account has this SSH key' } };
    const user = (await this.aggregates.load(User, binding.user_id)).state;
    const seen = await this.readModels.findOne<SshKeyDocument>(SSH_KEYS_COLLECTION, { _id: binding.fingerprint });
    const match = {
      user_id: binding.user_id,
      key_id: binding.key_id,
      email: binding.email,
      is_active: user.user_id !== null,
      public_key_verified: true, // a key is bound only by a followed link
      verified_at: binding.bound_at,
      last_seen_at: seen?.last_seen_at ?? binding.bound_at,
    };
    return { status: 200, body: { verified: true, count: 1, matches: [match] } };
  }
}

@QueryHandler(PreviewSignInQuery)
export class PreviewSignInHandler implements IQueryHandler<PreviewSignInQuery> {
  constructor(private readonly aggregates: AggregateRepository) {}

  async execute({ token }: PreviewSignInQuery): Promise<SignInPage> {
    return linkPage(await signInLinkOf(this.aggregates, token));
  }
}
