import { Command } from '@nestjs/cqrs';
import type { RegisteredWebhookDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /arbor/v1/webhooks: answers the webhook with its signing secret (shown this once). */
export class RegisterWebhookCommand extends Command<RegisteredWebhookDto> {
  constructor(
    readonly context: RequestContext,
    readonly url: string,
    readonly event_types: string[],
    readonly description: string | null,
  ) {
    super();
  }
}

/** DELETE /arbor/v1/webhooks/{id}: nothing more is delivered to it. */
export class DeleteWebhookCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly webhook_id: string,
  ) {
    super();
  }
}
