import type { EventStore } from '../../event-store/src/event-store.port';
import type { ReadModelStore } from '../../read-models/src/read-model-store.port';
import type { ArborConfig } from './arbor-config';

/** The opened stores and settings every app runs on (embedded: one set shared by all three). */
export interface Infrastructure {
  config: ArborConfig;
  eventStore: EventStore;
  readModels: ReadModelStore;
}

export const ARBOR_CONFIG = Symbol('ARBOR_CONFIG');
