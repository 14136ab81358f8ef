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

/**
 * How a sealed field's value is sealed: `text` a string (or null), `bytes` the bytes of a base64
 * string, `values` each value of a string map (its names stay readable), `json` any JSON value.
 */
export type SealedKind = 'text' | 'bytes' | 'values' | 'json';

export interface SealedField {
  field: string;
  kind: SealedKind;
}

const SEALED_KINDS: readonly string[] = ['text', 'bytes', 'values', 'json'] satisfies SealedKind[];

/**
 * Fields of `type`'s data that the log holds only sealed with the org's key (marked
 * `@sealed "<kind>"`): file contents, exec stdin and env, env var values. Events written before
 * their type's SEALED_SINCE version hold them in clear.
 */
export function sealedFieldsOf(type: string): SealedField[] {
  const properties = (EVENT_CATALOGUE[type]?.schema as { properties?: Record<string, { sealed?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.sealed !== undefined)
    .map(([field, property]) => {
      if (!SEALED_KINDS.includes(property.sealed as string)) throw new Error(`${type}.${field}: @sealed must name one of ${SEALED_KINDS.join(', ')}`);
      return { field, kind: property.sealed as SealedKind };
    });
}

/** The schema version from which each type with sealed fields is written sealed (older: in clear). */
export const SEALED_SINCE: Readonly<Record<string, number>> = {
  ExecRequested: 2,
  FileContentChunk: 2,
  EnvVarsSet: 2,
  IdempotentResponseRecorded: 2,
  VmCreationRequested: 2,
};

/** Whether an event of `type` written at `schemaVersion` holds its sealed fields sealed. */
export function writtenSealed(type: string, schemaVersion: number): boolean {
  const since = SEALED_SINCE[type];
  return since !== undefined && schemaVersion >= since;
}
