import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@arbor/domain';
import {
  READ_MODEL_STORE,
  WEBHOOK_DELIVERIES_COLLECTION,
  WEBHOOKS_COLLECTION,
  type Filter,
  type ReadModelStore,
  type WebhookDeliveryDocument,
  type WebhookDocument,
} from '@arbor/read-models';

/** Reads of the `webhooks` and `webhook_deliveries` read models; another org's webhook is reported like a missing one. */
@Injectable()
export class WebhookReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  list(org_id: string): Promise<WebhookDocument[]> {
    return this.readModels.find<WebhookDocument>(WEBHOOKS_COLLECTION, { org_id }, { sort: { created_at: 1, _id: 1 } });
  }

  /** The org's webhooks but `except` (a retried registration must not count itself). */
  countOthers(org_id: string, except: string): Promise<number> {
    return this.readModels.count(WEBHOOKS_COLLECTION, { org_id, _id: { $ne: except } });
  }

  async get(org_id: string, webhook_id: string): Promise<WebhookDocument> {
    const webhook = await this.readModels.findOne<WebhookDocument>(WEBHOOKS_COLLECTION, { _id: webhook_id, org_id });
    if (!webhook) throw notFound('webhook');
    return webhook;
  }

  /** Newest event first; `before` pages on by event position. */
  deliveries(webhook: WebhookDocument, page: { limit: number; before?: number; status?: string }): Promise<WebhookDeliveryDocument[]> {
    const filter: Filter = { webhook_id: webhook.webhook_id };
    if (page.before !== undefined) filter.event_position = { $lt: page.before };
    if (page.status) filter.status = page.status;
    return this.readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES_COLLECTION, filter, { sort: { event_position: -1 }, limit: page.limit });
  }
}
