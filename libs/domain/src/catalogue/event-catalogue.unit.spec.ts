import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { AGGREGATES } from '../aggregates';
import { generateEventSchemas } from '../testing/event-schema-generator';
import { EVENT_CATALOGUE, redactedFieldsOf, SEALED_SINCE, sealedFieldsOf, writtenSealed, type CatalogueEntry } from './event-catalogue';
import { UPCASTERS } from './upcasters';

/** A schema without its descriptions: what changing a comment does not change. */
function structure(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structure);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'description').map(([key, value]) => [key, structure(value)]));
}

// As JSON holds them: some generated schema objects have prototypes isDeepStrictEqual would tell apart.
const generated: ReturnType<typeof generateEventSchemas> = JSON.parse(JSON.stringify(generateEventSchemas()));

/**
 * `npm run catalogue` (UPDATE_CATALOGUE=1) writes the catalogue from the types: a new type at
 * version 1, a changed structure at the next version (whose upcaster the checks below then ask
 * for), new descriptions as they are.
 */
if (process.env.UPDATE_CATALOGUE) {
  const next: Record<string, CatalogueEntry> = {};
  for (const [type, entry] of Object.entries(generated)) {
    const current = EVENT_CATALOGUE[type];
    const version = !current ? 1 : isDeepStrictEqual(structure(current.schema), structure(entry.schema)) ? current.schema_version : current.schema_version + 1;
    next[type] = { aggregate: entry.aggregate, category: entry.category, description: entry.description, schema_version: version, schema: entry.schema };
  }
  writeFileSync(join(__dirname, 'event-catalogue.json'), `${JSON.stringify(next, null, 2)}\n`);
  Object.assign(EVENT_CATALOGUE, next);
}

describe('the event catalogue: generated from the domain types, versioned, with upcasters', () => {
  it('lists every event type of every aggregate, and nothing else', () => {
    const types = AGGREGATES.flatMap((aggregate) => aggregate.eventTypes).sort();
    expect(Object.keys(EVENT_CATALOGUE).sort()).toEqual(types); // else: npm run catalogue
  });

  it("holds each type's schema as its type generates it, at the type's version", () => {
    for (const [type, entry] of Object.entries(generated)) {
      const published = EVENT_CATALOGUE[type];
      // A different structure is a new schema_version with an upcaster: npm run catalogue, then add one.
      expect({ type, structure: structure(published?.schema) }).toEqual({ type, structure: structure(entry.schema) });
      expect({ type, aggregate: published.aggregate, category: published.category }).toEqual({ type, aggregate: entry.aggregate, category: entry.category });
    }
  });

  it('has an upcaster from every older version of every type', () => {
    for (const [type, entry] of Object.entries(EVENT_CATALOGUE)) {
      for (let version = 1; version < entry.schema_version; version++) {
        expect({ type, version, upcaster: typeof UPCASTERS[type]?.[version] }).toEqual({ type, version, upcaster: 'function' });
      }
    }
    for (const type of Object.keys(UPCASTERS)) expect(Object.keys(EVENT_CATALOGUE)).toContain(type);
  });

  it('marks the secrets (and their hashes) the feed never shows', () => {
    expect(redactedFieldsOf('ApiKeyIssued')).toEqual(['secret_sha256']);
    expect(redactedFieldsOf('VmBooted')).toEqual([]);
  });

  it('marks the secrets the log holds only sealed, and the version each type is sealed from', () => {
    expect(sealedFieldsOf('ExecRequested')).toEqual([
      { field: 'env', kind: 'values' },
      { field: 'stdin', kind: 'text' },
    ]);
    expect(sealedFieldsOf('FileContentChunk')).toEqual([{ field: 'data_b64', kind: 'bytes' }]);
    expect(sealedFieldsOf('EnvVarsSet')).toEqual([{ field: 'vars', kind: 'values' }]);
    expect(sealedFieldsOf('VmCreationRequested')).toEqual([{ field: 'env', kind: 'values' }]);
    expect(sealedFieldsOf('IdempotentResponseRecorded')).toEqual([{ field: 'body', kind: 'json' }]);
    // Every type with sealed fields says from which version it was written sealed (older: in clear).
    const sealedTypes = Object.keys(EVENT_CATALOGUE).filter((type) => sealedFieldsOf(type).length > 0);
    expect(Object.keys(SEALED_SINCE).sort()).toEqual(sealedTypes.sort());
    for (const [type, since] of Object.entries(SEALED_SINCE)) expect(since).toBeLessThanOrEqual(EVENT_CATALOGUE[type].schema_version);
    expect([writtenSealed('ExecRequested', 1), writtenSealed('ExecRequested', 2), writtenSealed('VmBooted', 1)]).toEqual([false, true, false]);
  });
});
