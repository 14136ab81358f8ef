import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Identity, newCommandContext, stepContext } from '@arbor/application';
import type { ShellAuthCreatedKeyDto } from '@arbor/contracts';
import { deterministicUuid, invalid, notFound, requireApiKeyLabel, SignIn } from '@arbor/domain';
import { ClientLimits } from '../client-limits';
import { SignInLookup, signInSubjectOf } from '../sign-in-lookup';
import { CreateSignInKeyCommand } from './create-sign-in-key.command';

/**
 * Makes the API key a confirmed sign-in allows: 400 for a bad label or an account without an
 * org, 401 unless the link was followed (within ten minutes, and the key not made yet), 404 for
 * an org the account is not a member of. The sign-in is used up first, so two calls at once
 * make one key: the other is told the sign-in was used.
 */
@CommandHandler(CreateSignInKeyCommand)
export class CreateSignInKeyHandler implements ICommandHandler<CreateSignInKeyCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly identity: Identity,
    private readonly lookup: SignInLookup,
    private readonly limits: ClientLimits,
  ) {}

  async execute({ body, client_address }: CreateSignInKeyCommand): Promise<ShellAuthCreatedKeyDto> {
    await this.limits.check(client_address);
    const subject = signInSubjectOf(body);
    const label = requireApiKeyLabel(body.label);
    if (body.org_name !== undefined && body.org_name !== null && typeof body.org_name !== 'string') throw invalid('org_name must be the name of one of your orgs');
    const { request } = await this.lookup.verified(subject);
    const orgs = await this.identity.orgsOf(subject.user_id);
    if (orgs.length === 0) throw invalid('this account belongs to no org: ask an owner or admin of one to invite you');
    const org = body.org_name ? orgs.find((o) => o.name === body.org_name) : orgs[0];
    if (!org || !(await this.identity.roleOf(org.org_id, subject.user_id))) throw notFound('org');

    const command_id = deterministicUuid('sign-in-key', request.request_id);
    const context = newCommandContext({ command_id, correlation_id: request.request_id, org_id: org.org_id, actor_key_id: null });
    const api_key_id = deterministicUuid(command_id, 'api-key'); // the id Identity.issueKey gives it
    const complete = { type: 'CompleteSignIn' as const, ssh_key_fingerprint: subject.key.fingerprint, api_key_id, now: new Date().toISOString() };
    await this.aggregates.handle(SignIn, subject.user_id, complete, stepContext(context, 'complete'));
    const issued = await this.identity.issueKey({ org_id: org.org_id, user_id: subject.user_id, label }, context);
    return { success: true, api_key: issued.api_key, api_key_id: issued.api_key_id, org_id: org.org_id, org_name: org.name };
  }
}
