import { deciderSpec } from '../testing/decider-spec';
import { isDeliverableEventType, webhookWants } from './deliverable-event-types';
import { webhookDecider } from './webhook.decider';
import type { WebhookEvent } from './webhook.events';

const now = '2026-11-24T10:00:00.000Z';
const webhook_id = '11111111-1111-4111-8111-111111111111';
const spec = deciderSpec(webhookDecider);
const register = (fields: { url?: string; event_types?: string[] } = {}) => ({
  type: 'RegisterWebhook' as const,
  webhook_id,
  org_id: 'org-1',
  url: fields.url ?? 'https://hooks.example.com/arbor',
  event_types: fields.event_types ?? ['VmBooted'],
  description: null,
  now,
});
const registered = (event_types = ['VmBooted'], url = 'https://hooks.example.com/arbor'): WebhookEvent => ({
  type: 'WebhookRegistered',
  data: { webhook_id, org_id: 'org-1', url, event_types, description: null, registered_at: now },
});
const remove = (org_id = 'org-1') => ({ type: 'DeleteWebhook' as const, org_id, now });

describe('webhook decider', () => {
  it('registers an http(s) endpoint for catalogue types, each once, or for every type with ["*"]', () => {
    spec.given([]).when(register()).then([registered()]);
    spec.given([]).when(register({ url: 'http://10.0.0.5:8080/hook?team=a', event_types: ['VmBooted', 'VmDeleted', 'VmBooted'] })).then([registered(['VmBooted', 'VmDeleted'], 'http://10.0.0.5:8080/hook?team=a')]);
    spec.given([]).when(register({ event_types: ['*'] })).then([registered(['*'])]);
    spec.given([registered()]).when(register()).thenThrows('conflict', `webhook ${webhook_id} already exists`);
  });

  it('refuses a URL that is not absolute http(s), or that carries credentials', () => {
    spec.given([]).when(register({ url: '/relative/path' })).thenThrows('invalid', "url must be an absolute http or https URL (got '/relative/path')");
    spec.given([]).when(register({ url: 'not a url' })).thenThrows('invalid', /must be an absolute http or https URL/);
    spec.given([]).when(register({ url: 'ftp://files.example.com/x' })).thenThrows('invalid', 'url must be an absolute http or https URL (got a ftp: URL)');
    spec.given([]).when(register({ url: 'file:///etc/passwd' })).thenThrows('invalid', /got a file: URL/);
    spec.given([]).when(register({ url: 'https://user:secret@hooks.example.com/' })).thenThrows('invalid', /must not carry a user or password/);
    spec.given([]).when(register({ url: `https://hooks.example.com/${'a'.repeat(2048)}` })).thenThrows('invalid', 'url must be at most 2048 characters');
  });

  it('refuses unknown event types naming them, types webhooks never receive, and "*" with others', () => {
    spec.given([]).when(register({ event_types: ['VmBooted', 'NoSuchEvent', 'toString'] })).thenThrows('invalid', 'unknown event type(s): NoSuchEvent, toString (GET /api/v1/events/types lists them)');
    spec.given([]).when(register({ event_types: ['WebhookDelivered', 'IdempotentResponseRecorded'] })).thenThrows('invalid', 'event type(s) never delivered to webhooks: WebhookDelivered, IdempotentResponseRecorded');
    spec.given([]).when(register({ event_types: [] })).thenThrows('invalid', /at least one event type, or be \["\*"\]/);
    spec.given([]).when(register({ event_types: ['*', 'VmBooted'] })).thenThrows('invalid', 'event_types: "*" (every type) stands alone');
  });

  it("deletes the org's own webhook once; another org's, a deleted or a missing one is not found", () => {
    spec.given([registered()]).when(remove()).then([{ type: 'WebhookDeleted', data: { webhook_id, org_id: 'org-1', deleted_at: now } }]);
    spec.given([registered()]).when(remove('org-2')).thenThrows('not_found', 'webhook not found');
    spec.given([registered(), { type: 'WebhookDeleted', data: { webhook_id, org_id: 'org-1', deleted_at: now } }]).when(remove()).thenThrows('not_found');
    spec.given([]).when(remove()).thenThrows('not_found', 'webhook not found');
  });
});

describe('which events go to webhooks', () => {
  it("is every catalogue type but the webhooks' own and the idempotency records", () => {
    expect(isDeliverableEventType('VmBooted')).toBe(true);
    expect(isDeliverableEventType('RepositoryCreated')).toBe(true);
    for (const type of ['WebhookRegistered', 'WebhookDeleted', 'WebhookDelivered', 'WebhookDeliveryAttemptFailed', 'WebhookDeliveryFailed', 'IdempotentResponseRecorded', 'NoSuchEvent', 'constructor']) {
      expect({ type, deliverable: isDeliverableEventType(type) }).toEqual({ type, deliverable: false });
    }
  });

  it('a webhook receives the types it names, or every deliverable one with "*"', () => {
    expect(webhookWants(['VmBooted'], 'VmBooted')).toBe(true);
    expect(webhookWants(['VmBooted'], 'VmDeleted')).toBe(false);
    expect(webhookWants(['*'], 'VmDeleted')).toBe(true);
    expect(webhookWants(['*'], 'WebhookDelivered')).toBe(false);
  });
});
