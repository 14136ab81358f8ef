import { Module } from '@nestjs/common';
import { type ArborConfig, ARBOR_CONFIG, WebhookSecrets } from '@arbor/application';
import { DeleteWebhookHandler, RegisterWebhookHandler } from './commands/webhook-command.handlers';
import { WebhookReadModel } from './webhook-read-model';
import { WebhooksController } from './webhooks.controller';

/** Webhooks (`/arbor/v1/webhooks`): registering, listing, deleting, and their recent deliveries. */
@Module({
  controllers: [WebhooksController],
  providers: [
    WebhookReadModel,
    RegisterWebhookHandler,
    DeleteWebhookHandler,
    { provide: WebhookSecrets, useFactory: (config: ArborConfig) => WebhookSecrets.load(config), inject: [ARBOR_CONFIG] },
  ],
})
export class WebhooksModule {}
