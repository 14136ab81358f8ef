import { join } from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { AGGREGATES } from '../aggregates';
import type { CatalogueEntry } from '../catalogue/event-catalogue';

/**
 * The JSON Schema of every event's `data`, generated from the domain's own types: each event type
 * `X` is the exported type alias `X = DomainEvent<'X', {…}>` (a convention the generator relies on:
 * an event whose alias is missing fails here). JSDoc becomes descriptions; `@redacted` on a field
 * marks a secret (or its hash) that the feed never shows; `@sealed "<kind>"` a secret the log
 * holds only sealed with the org's key (see SealedKind).
 */
export function generateEventSchemas(): Record<string, Omit<CatalogueEntry, 'schema_version'>> {
  const generator = createGenerator({
    path: join(__dirname, '..', 'index.ts'),
    tsconfig: join(__dirname, '..', '..', '..', '..', 'tsconfig.json'),
    type: '*',
    expose: 'none',
    topRef: false,
    skipTypeCheck: true,
    jsDoc: 'extended',
    extraTags: ['redacted', 'sealed'],
  });
  const entries: Record<string, Omit<CatalogueEntry, 'schema_version'>> = {};
  for (const aggregate of AGGREGATES) {
    for (const type of aggregate.eventTypes) {
      const event = generator.createSchema(type) as { description?: string; properties: { data: object } };
      entries[type] = { aggregate: aggregate.name, category: aggregate.category, description: event.description ?? null, schema: event.properties.data };
    }
  }
  return entries;
}
