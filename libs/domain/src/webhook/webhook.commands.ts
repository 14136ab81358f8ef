import type { DomainCommand } from '../shared/decider';

/** `event_types`: catalogue types, or `["*"]` for all; the decider checks the URL and the types. */
export type RegisterWebhook = DomainCommand<
  'RegisterWebhook',
  { webhook_id: string; org_id: string; url: string; event_types: string[]; description: string | null; now: string }
>;
/** `org_id`: the caller's; another org's webhook is not found. */
export type DeleteWebhook = DomainCommand<'DeleteWebhook', { org_id: string; now: string }>;
export type WebhookCommand = RegisterWebhook | DeleteWebhook;
