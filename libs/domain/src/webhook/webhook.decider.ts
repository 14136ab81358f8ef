import { EVENT_CATALOGUE } from '../catalogue/event-catalogue';
import type { Decider } from '../shared/decider';
import { conflict, invalid, notFound } from '../shared/domain-error';
import { ALL_EVENT_TYPES, isDeliverableEventType } from './deliverable-event-types';
import type { WebhookCommand } from './webhook.commands';
import type { WebhookEvent, WebhookRegistered } from './webhook.events';

export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** How many webhooks one org may have (each is one more POST for every event of the org). */
export const MAX_WEBHOOKS_PER_ORG = 25;

export interface WebhookState {
  webhook: WebhookRegistered['data'] | null;
  deleted: boolean;
}

/**
 * An absolute http(s) URL with a host and without credentials: a user or password in it would
 * be in the log in clear (the signature is how a receiver knows the sender).
 */
function requireUrl(url: string): void {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) throw invalid(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`url must be an absolute http or https URL (got '${url.slice(0, 100)}')`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(`url must be an absolute http or https URL (got a ${parsed.protocol} URL)`);
  if (!parsed.hostname) throw invalid('url must name a host');
  if (parsed.username || parsed.password) throw invalid('url must not carry a user or password: they would be stored in clear; verify the signature instead');
}

/** The types as given, each once; `["*"]` for all; unknown types and undeliverable ones named. */
function requireEventTypes(event_types: string[]): string[] {
  const types = [...new Set(event_types)];
  if (types.length === 0) throw invalid(`event_types must name at least one event type, or be ["${ALL_EVENT_TYPES}"] for every type`);
  if (types.includes(ALL_EVENT_TYPES)) {
    if (types.length > 1) throw invalid(`event_types: "${ALL_EVENT_TYPES}" (every type) stands alone`);
    return types;
  }
  const unknown = types.filter((type) => !Object.hasOwn(EVENT_CATALOGUE, type));
  if (unknown.length) throw invalid(`unknown event type(s): ${unknown.join(', ')} (GET /api/v1/events/types lists them)`);
  const undelivered = types.filter((type) => !isDeliverableEventType(type));
  if (undelivered.length) throw invalid(`event type(s) never delivered to webhooks: ${undelivered.join(', ')}`);
  return types;
}

function decide(command: WebhookCommand, state: WebhookState): WebhookEvent[] {
  switch (command.type) {
    case 'RegisterWebhook': {
      if (state.webhook) throw conflict(`webhook ${command.webhook_id} already exists`);
      const { webhook_id, org_id, url, description, now } = command;
      requireUrl(url);
      const event_types = requireEventTypes(command.event_types);
      return [{ type: 'WebhookRegistered', data: { webhook_id, org_id, url, event_types, description, registered_at: now } }];
    }
    case 'DeleteWebhook': {
      const webhook = state.webhook;
      if (!webhook || state.deleted || webhook.org_id !== command.org_id) throw notFound('webhook');
      return [{ type: 'WebhookDeleted', data: { webhook_id: webhook.webhook_id, org_id: webhook.org_id, deleted_at: command.now } }];
    }
  }
}

function evolve(state: WebhookState, event: WebhookEvent): WebhookState {
  switch (event.type) {
    case 'WebhookRegistered':
      return { webhook: event.data, deleted: false };
    case 'WebhookDeleted':
      return { ...state, deleted: true };
  }
}

export const webhookDecider: Decider<WebhookCommand, WebhookState, WebhookEvent> = { initialState: () => ({ webhook: null, deleted: false }), decide, evolve };
