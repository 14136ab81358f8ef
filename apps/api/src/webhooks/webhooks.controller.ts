import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  ListWebhookDeliveriesResponseDto,
  ListWebhooksResponseDto,
  RegisteredWebhookDto,
  RegisterWebhookRequestDto,
  WebhookDeliveriesQueryDto,
  WebhookDto,
} from '@arbor/contracts';
import { ALL_EVENT_TYPES } from '@arbor/domain';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { DeleteWebhookCommand, RegisterWebhookCommand } from './commands/webhook-commands';
import { presentDelivery, presentWebhook } from './webhook-presenter';
import { WebhookReadModel } from './webhook-read-model';

/**
 * An org's webhooks, under Arbor's own prefix `/arbor/v1` (outside the Vers API's paths, so no
 * Vers client meets them): every event of the org of the types a webhook names is POSTed to it,
 * signed, by the webhook deliverer. Another org's webhook answers 404.
 */
@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('arbor/v1/webhooks')
export class WebhooksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly webhooks: WebhookReadModel,
  ) {}

  /**
   * The answer carries the signing secret, so this handler writes it itself: the idempotency
   * interceptor records only answers it writes, and a secret never goes into the log. A retry with
   * the same X-Idempotency-Key runs again, finds its webhook registered, and answers it again.
   */
  @AnyMember('registers a webhook of the caller')
  @Post()
  @ApiCreatedResponse({ type: RegisteredWebhookDto, description: '400 for a URL that is not absolute http(s), or unknown event types (named); 409 past 25 webhooks' })
  async register(@Ctx() ctx: RequestContext, @Body() body: RegisterWebhookRequestDto, @Res() reply: FastifyReply): Promise<void> {
    const registered = await this.commands.execute(new RegisterWebhookCommand(ctx, body.url, body.event_types ?? [ALL_EVENT_TYPES], body.description ?? null));
    reply.status(201).send(registered);
  }

  @Get()
  @ApiOkResponse({ type: ListWebhooksResponseDto })
  async list(@Ctx() ctx: RequestContext): Promise<ListWebhooksResponseDto> {
    return { webhooks: (await this.webhooks.list(ctx.principal.org_id)).map(presentWebhook) };
  }

  @Get(':webhook_id')
  @ApiOkResponse({ type: WebhookDto })
  async get(@Ctx() ctx: RequestContext, @Param('webhook_id', UuidParamPipe) webhookId: string): Promise<WebhookDto> {
    return presentWebhook(await this.webhooks.get(ctx.principal.org_id, webhookId));
  }

  @Changes('webhook')
  @Delete(':webhook_id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Nothing more is delivered to it; its deliveries being retried are given up' })
  async delete(@Ctx() ctx: RequestContext, @Param('webhook_id', UuidParamPipe) webhookId: string): Promise<void> {
    await this.commands.execute(new DeleteWebhookCommand(ctx, webhookId));
  }

  @Get(':webhook_id/deliveries')
  @ApiOkResponse({ type: ListWebhookDeliveriesResponseDto })
  async deliveries(@Ctx() ctx: RequestContext, @Param('webhook_id', UuidParamPipe) webhookId: string, @Query() query: WebhookDeliveriesQueryDto): Promise<ListWebhookDeliveriesResponseDto> {
    const webhook = await this.webhooks.get(ctx.principal.org_id, webhookId);
    const deliveries = await this.webhooks.deliveries(webhook, { limit: query.limit ?? 50, before: query.before, status: query.status });
    return { deliveries: deliveries.map(presentDelivery) };
  }
}
