import { toDomainEvent } from '@arbor/application';
import { aggregateOfStream, Webhook, webhookWants, type WebhookEvent } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';

/** A webhook as the deliverer needs it (its secret is derived when signing). */
export interface WebhookTarget {
  webhook_id: string;
  org_id: string;
  url: string;
  event_types: string[];
}

/** The live webhooks at one point of the log, by org. */
export class WebhookRegistry {
  private readonly byOrg = new Map<string, Map<string, WebhookTarget>>();

  constructor(targets: WebhookTarget[] = []) {
    targets.forEach((target) => this.set(target));
  }

  set(target: WebhookTarget): void {
    const org = this.byOrg.get(target.org_id) ?? this.byOrg.set(target.org_id, new Map()).get(target.org_id)!;
    org.set(target.webhook_id, target);
  }

  delete(org_id: string, webhook_id: string): void {
    this.byOrg.get(org_id)?.delete(webhook_id);
    if (this.byOrg.get(org_id)?.size === 0) this.byOrg.delete(org_id);
  }

  /** The webhooks that receive this event: of its org, wanting its type (never a webhook's own events). */
  targetsOf(event: RecordedEvent): WebhookTarget[] {
    const org_id = event.metadata.org_id;
    const org = org_id === null ? undefined : this.byOrg.get(org_id);
    return org ? [...org.values()].filter((target) => webhookWants(target.event_types, event.type)) : [];
  }

  all(): WebhookTarget[] {
    return [...this.byOrg.values()].flatMap((org) => [...org.values()]);
  }
}

/** What an event changes in the registry: a webhook registered or deleted; null for any other. */
export function registryChange(event: RecordedEvent): ((registry: WebhookRegistry) => void) | null {
  if (aggregateOfStream(event.stream_id) !== Webhook) return null;
  const change = toDomainEvent<WebhookEvent>(event);
  switch (change.type) {
    case 'WebhookRegistered': {
      const { webhook_id, org_id, url, event_types } = change.data;
      return (registry) => registry.set({ webhook_id, org_id, url, event_types });
    }
    case 'WebhookDeleted': {
      const { webhook_id, org_id } = change.data;
      return (registry) => registry.delete(org_id, webhook_id);
    }
  }
}
