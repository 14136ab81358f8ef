import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ARBOR_CONFIG, type ArborConfig, Operations, privateHostOf, WebhookSecrets } from '@arbor/application';
import type { RegisteredWebhookDto } from '@arbor/contracts';
import { conflict, deterministicUuid, invalid, MAX_WEBHOOKS_PER_ORG, Webhook } from '@arbor/domain';
import { presentWebhook } from '../webhook-presenter';
import { WebhookReadModel } from '../webhook-read-model';
import { DeleteWebhookCommand, RegisterWebhookCommand } from './webhook-commands';

@CommandHandler(RegisterWebhookCommand)
export class RegisterWebhookHandler implements ICommandHandler<RegisterWebhookCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly webhooks: WebhookReadModel,
    private readonly secrets: WebhookSecrets,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  /**
   * The id derives from the command id, so a retry with the same X-Idempotency-Key registers
   * nothing new and answers the same webhook (and secret, derived again: it is stored nowhere).
   * The bound per org is checked on the read model: two registrations at once may both pass it.
   */
  async execute({ context, url, event_types, description }: RegisterWebhookCommand): Promise<RegisteredWebhookDto> {
    const privateHost = this.config.webhooks.allowPrivate ? null : privateHostOfUrl(url);
    if (privateHost) throw invalid(`url: ${privateHost}; webhooks may not call the host or private networks (an operator may allow it with ARBOR_WEBHOOK_ALLOW_PRIVATE=true)`);
    const org_id = context.principal.org_id;
    const webhook_id = deterministicUuid(context.command.command_id, 'webhook');
    if ((await this.webhooks.countOthers(org_id, webhook_id)) >= MAX_WEBHOOKS_PER_ORG) throw conflict(`an org may have at most ${MAX_WEBHOOKS_PER_ORG} webhooks: delete one first`);
    await this.operations.run(Webhook, webhook_id, { type: 'RegisterWebhook', webhook_id, org_id, url, event_types, description, now: new Date().toISOString() }, context.command);
    return { ...presentWebhook(await this.webhooks.get(org_id, webhook_id)), secret: this.secrets.secretOf(webhook_id) };
  }
}

@CommandHandler(DeleteWebhookCommand)
export class DeleteWebhookHandler implements ICommandHandler<DeleteWebhookCommand> {
  constructor(private readonly operations: Operations) {}

  async execute({ context, webhook_id }: DeleteWebhookCommand): Promise<void> {
    await this.operations.run(Webhook, webhook_id, { type: 'DeleteWebhook', org_id: context.principal.org_id, now: new Date().toISOString() }, context.command);
  }
}

/** Why the URL's host is private, when it parses (the decider answers for URLs that do not). */
function privateHostOfUrl(url: string): string | null {
  try {
    return privateHostOf(new URL(url));
  } catch {
    return null;
  }
}
