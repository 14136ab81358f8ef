import catalogue from './event-catalogue.json';

/** One event type as the catalogue publishes it. */
export interface CatalogueEntry {
  /** The aggregate whose streams hold it (`Vm`, …) and their category (`vm`). */
  aggregate: string;
  category: string;
  description: string | null;
  /** The version events of this type are written at; older ones are upcast on read. */
  schema_version: number;
  /** JSON Schema of its `data` at that version. */
  schema: object;
}

/**
 * The event catalogue: every event type, its current schema version and the JSON Schema of its
 * data. Generated from the domain's own types (`npm run catalogue` writes event-catalogue.json;
 * the catalogue spec fails when a type is missing, or its schema changed without a new
 * schema_version and an upcaster), so there is no hand-kept copy.
 */
export const EVENT_CATALOGUE: Readonly<Record<string, CatalogueEntry>> = catalogue as Record<string, CatalogueEntry>;

/** The schema version events of `type` are written at (1 for a type the catalogue does not know). */
export function schemaVersionOf(type: string): number {
  return EVENT_CATALOGUE[type]?.schema_version ?? 1;
}

/** Fields of `type`'s data that hold a secret or its hash (marked `@redacted`): never shown in the feed. */
export function redactedFieldsOf(type: string): string[] {
  const properties = (EVENT_CATALOGUE[type]?.schema as { properties?: Record<string, { redacted?: boolean }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.redacted === true)
    .map(([field]) => field);
}
