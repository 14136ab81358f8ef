import type { EventStore } from '@arbor/event-store';
import type { ReadModelStore } from '@arbor/read-models';
import type { ArborConfig } from './arbor-config';
import type { Secrets } from './secrets/secrets';

/** The opened stores and settings every app runs on (embedded: one set shared by all three). */
export interface Infrastructure {
  config: ArborConfig;
  eventStore: EventStore;
  readModels: ReadModelStore;
  /** The key store and what seals and opens secrets with it (opened on first use). */
  secrets: Secrets;
}

export const ARBOR_CONFIG = Symbol('ARBOR_CONFIG');
