/**
 * An event as the feed shows it (upcast, `@redacted` fields replaced): shared with the webhook
 * deliverer, whose deliveries carry the same JSON, so it lives in libs/application.
 */
export { presentEvent, REDACTED } from '@arbor/application';
