import { createHmac } from 'node:crypto';
import type { ArborConfig } from './arbor-config';
import { loadServerSecret } from './server-secret';
import { WEBHOOK_SECRET_PREFIX } from './webhook-signature';

const SECRET = { env: 'ARBOR_WEBHOOK_SECRET', file: 'webhook-secret' };

/**
 * Every webhook's signing secret, derived from a server secret and the webhook id
 * (`whsec_` + base64 HMAC-SHA256(server secret, "webhook:<id>")), so no secret is stored: the log
 * is append-only and copied to feeds, exports and backups, and a secret written there (even
 * encrypted) could never be taken back. The api shows it once, when the webhook is registered;
 * the deliverer derives it again for each delivery. A new secret is a new webhook (delete, register).
 *
 * The server secret is ARBOR_WEBHOOK_SECRET (hex, at least 32 bytes), or else
 * `<dataDir>/webhook-secret`, created on first use: the api and the deliverer must share it (the
 * same variable, or the same data directory).
 */
export class WebhookSecrets {
  private constructor(private readonly secret: Buffer) {}

  static async load(config: Pick<ArborConfig, 'dataDir'>, env: NodeJS.ProcessEnv = process.env): Promise<WebhookSecrets> {
    return new WebhookSecrets(await loadServerSecret(config.dataDir, SECRET, env));
  }

  secretOf(webhook_id: string): string {
    return WEBHOOK_SECRET_PREFIX + createHmac('sha256', this.secret).update(`webhook:${webhook_id}`).digest('base64');
  }
}
