import type { EventStore } from '@arbor/event-store';
import type { ReadModelStore } from '@arbor/read-models';
import type { ArborConfig } from './arbor-config';

/** The opened stores and settings every app runs on (embedded: one set shared by all three). */
export interface Infrastructure {
  config: ArborConfig;
  eventStore: EventStore;
  readModels: ReadModelStore;
}

export const ARBOR_CONFIG = Symbol('ARBOR_CONFIG');
