import { JsonStateFile } from '@arbor/application';
import type { WebhookTarget } from './webhook-registry';

/**
 * The deliverer's durable checkpoint: the log position up to which every delivery has been
 * recorded (delivered, or failed for good), and the webhooks live at that position, so a restart
 * resumes with exactly the webhooks the events after it are matched against.
 */
export interface DelivererState {
  position: number | null;
  webhooks: WebhookTarget[];
}

export const delivererStateFile = (path: string) => new JsonStateFile<DelivererState>(path, () => ({ position: null, webhooks: [] }));
