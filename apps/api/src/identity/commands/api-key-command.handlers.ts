import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Identity } from '@arbor/application';
import type { CreatedApiKeyDto } from '@arbor/contracts';
import { ApiKey, notFound } from '@arbor/domain';
import { ApiKeyAuthenticator } from '../../auth/api-key-authenticator';
import { CreateApiKeyCommand, RevokeApiKeyCommand } from './api-key-commands';

@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand> {
  constructor(private readonly identity: Identity) {}

  async execute({ context, label }: CreateApiKeyCommand): Promise<CreatedApiKeyDto> {
    const { org_id, user_id } = context.principal;
    const { api_key, api_key_id, created_at, label: kept } = await this.identity.issueKey({ org_id, user_id, label: label as string }, context.command);
    return { api_key, api_key_id, label: kept, org_id, user_id, created_at };
  }
}

@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly identity: Identity,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /** Who may revoke it is the role rule's (ChangeGuard: a member their own keys, owners and admins any); another org's key is missing. */
  async execute({ context, key_id }: RevokeApiKeyCommand): Promise<void> {
    const { state } = await this.aggregates.load(ApiKey, key_id);
    if (state.key?.org_id !== context.principal.org_id) throw notFound('api key');
    await this.identity.revokeKey(key_id, context.command);
    this.authenticator.forget(key_id);
  }
}
