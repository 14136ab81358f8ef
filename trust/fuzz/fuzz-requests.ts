import { type JsonSchema, type OpenApiDocument, type Operation, resolveSchema, typesOf } from '../support/openapi-operations';
import type { OperationRequest } from '../support/operation-request';
import type { SeededRandom } from '../support/seeded-random';
import { seedFor } from '../support/trust-settings';
import { badUuids, namedStrings, type OddValue, randomStrings, wrongQueryValues, wrongTypes } from './odd-values';

/** What the fuzzer changed in an operation's valid request, and the request it made of it. */
export interface Mutation {
  /** The class counted in the figures: wrong type, missing field, odd string, bad uuid, deep nesting, … */
  kind: string;
  /** Where and what, printed with a failure. */
  label: string;
  request: OperationRequest;
}

export interface MutationCounts {
  /** Odd strings per string field: the named ones tried (all of them with Infinity) … */
  namedStrings: number;
  /** … and random ones. */
  randomStrings: number;
}

const MIB = 1024 * 1024;
const DEEP = 5000;

const clone = <T>(value: T): T => structuredClone(value);

function withBodyAt(base: OperationRequest, path: (string | number)[], value: unknown, remove = false): OperationRequest {
  const request = clone(base);
  let node = (request.body as { json: any }).json;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path[path.length - 1];
  if (remove) delete node[last];
  else node[last] = value;
  return request;
}

/** The fields of a body schema to mutate: each property, nested objects' properties, a map's values and an array's items. */
function bodyFields(document: OpenApiDocument, schema: JsonSchema, base: unknown, prefix: (string | number)[] = [], depth = 0): { path: (string | number)[]; schema: JsonSchema; present: boolean }[] {
  const resolved = resolveSchema(document, schema);
  if (depth > 3 || typeof base !== 'object' || base === null) return [];
  const fields: { path: (string | number)[]; schema: JsonSchema; present: boolean }[] = [];
  for (const [name, property] of Object.entries(resolved.properties ?? {})) {
    const child = resolveSchema(document, property);
    const value = (base as Record<string, unknown>)[name];
    fields.push({ path: [...prefix, name], schema: child, present: value !== undefined });
    if (value === undefined) continue;
    if (child.properties) fields.push(...bodyFields(document, child, value, [...prefix, name], depth + 1));
    if (typeof child.additionalProperties === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      fields.push({ path: [...prefix, name, 'FUZZ_KEY'], schema: resolveSchema(document, child.additionalProperties), present: false });
    }
    if (child.items && Array.isArray(value)) fields.push({ path: [...prefix, name, 0], schema: resolveSchema(document, child.items), present: value.length > 0 });
  }
  return fields;
}

function oddStrings(seed: number, counts: MutationCounts): OddValue[] {
  return [...namedStrings(seed, counts.namedStrings), ...randomStrings(seed, counts.randomStrings)];
}

/** Every mutation of one operation's valid request, each seeded by the operation and the place it changes. */
export function mutationsOf(document: OpenApiDocument, operation: Operation, base: OperationRequest, counts: MutationCounts): Mutation[] {
  const mutations: Mutation[] = [];
  const seed = (...where: string[]) => seedFor('fuzz', operation.id, ...where);

  for (const parameter of operation.parameters) {
    const where = `${parameter.in} ${parameter.name}`;
    if (parameter.in === 'path') {
      const values = parameter.schema.format === 'uuid' || /_id$/.test(parameter.name) ? badUuids(seed(where)) : [];
      for (const { label, value } of values) {
        mutations.push({ kind: 'bad uuid', label: `${where}: ${label}`, request: { ...clone(base), pathValues: { ...base.pathValues, [parameter.name]: String(value) } } });
      }
      for (const { label, value } of oddStrings(seed(where, 'strings'), counts)) {
        mutations.push({ kind: 'odd string', label: `${where}: ${label}`, request: { ...clone(base), pathValues: { ...base.pathValues, [parameter.name]: String(value) } } });
      }
    } else if (parameter.in === 'query') {
      for (const { label, value } of wrongQueryValues(parameter.schema)) {
        mutations.push({ kind: 'wrong type', label: `${where}: ${label}`, request: { ...clone(base), query: { ...base.query, [parameter.name]: String(value) } } });
      }
      for (const { label, value } of oddStrings(seed(where, 'strings'), counts)) {
        mutations.push({ kind: 'odd string', label: `${where}: ${label}`, request: { ...clone(base), query: { ...base.query, [parameter.name]: String(value) } } });
      }
      if (parameter.required) {
        const query = { ...base.query };
        delete query[parameter.name];
        mutations.push({ kind: 'missing field', label: `${where}: left out`, request: { ...clone(base), query } });
      }
    } else if (parameter.in === 'header') {
      for (const { label, value } of namedStrings(seed(where), counts.namedStrings)) {
        const text = String(value);
        if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(text)) continue; // a header carries bytes only
        mutations.push({ kind: 'odd string', label: `${where}: ${label}`, request: { ...clone(base), headers: { ...base.headers, [parameter.name]: text } } });
      }
    }
  }

  if (base.body && 'json' in base.body) {
    for (const field of bodyFields(document, operation.body!.schema, base.body.json)) {
      const where = `body ${field.path.join('.')}`;
      if (field.present) mutations.push({ kind: 'missing field', label: `${where}: left out`, request: withBodyAt(base, field.path, undefined, true) });
      for (const { label, value } of wrongTypes(field.schema)) {
        mutations.push({ kind: 'wrong type', label: `${where}: ${label}`, request: withBodyAt(base, field.path, value) });
      }
      const types = typesOf(field.schema);
      if (field.schema.format === 'uuid') {
        for (const { label, value } of badUuids(seed(where))) mutations.push({ kind: 'bad uuid', label: `${where}: ${label}`, request: withBodyAt(base, field.path, value) });
      } else if (types.includes('string')) {
        for (const { label, value } of oddStrings(seed(where), counts)) mutations.push({ kind: 'odd string', label: `${where}: ${label}`, request: withBodyAt(base, field.path, value) });
      }
      if (field.path[field.path.length - 1] === 'FUZZ_KEY') {
        // The map's keys are strings too.
        for (const { label, value } of oddStrings(seed(where, 'keys'), counts)) {
          const map = field.path.slice(0, -1);
          mutations.push({ kind: 'odd string', label: `body ${map.join('.')} key: ${label}`, request: withBodyAt(base, map, { [String(value)]: 'v' }) });
        }
      }
    }
  }

  // The body as a whole: for every operation but reads (a GET carries no body).
  if (operation.method !== 'GET') {
    const raw = (label: string, kind: string, text: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
      mutations.push({ kind, label: `body: ${label}`, request: { ...clone(base), body: { raw: text, headers } } });
    const json = base.body && 'json' in base.body ? JSON.stringify(base.body.json) : '{}';
    raw('not JSON', 'not json', '{"a":');
    raw('a word', 'not json', 'nope');
    raw('empty with a JSON content type', 'not json', '');
    raw('an array', 'wrong type', '[]');
    raw('a number', 'wrong type', '42');
    raw('null', 'wrong type', 'null');
    raw('arrays 5000 deep', 'deep nesting', `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`);
    raw('objects 5000 deep', 'deep nesting', `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`);
    raw('a field 5000 deep', 'deep nesting', json.replace(/^\{/, `{"deep":${'['.repeat(DEEP)}${']'.repeat(DEEP)},`));
    raw('text/plain', 'content type', json, { 'content-type': 'text/plain' });
    raw('a form', 'content type', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' });
    raw('multipart', 'content type', '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nhi\r\n--x--\r\n', { 'content-type': 'multipart/form-data; boundary=x' });
    raw('charset latin1', 'content type', json, { 'content-type': 'application/json; charset=latin1' });
    raw('charset utf-16 over UTF-8 bytes', 'content type', json, { 'content-type': 'application/json; charset=utf-16' });
    raw('gzip that is not', 'content type', json, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    raw('an unknown content encoding', 'content type', json, { 'content-type': 'application/json', 'content-encoding': 'zstd-x' });
    raw('17 MiB', 'oversize', `{"pad":"${'x'.repeat(17 * MIB)}"}`);
  }

  // Headers every write honours.
  if (operation.method !== 'GET') {
    mutations.push({ kind: 'odd string', label: 'header x-idempotency-key: 300 characters', request: { ...clone(base), headers: { ...base.headers, 'x-idempotency-key': 'k'.repeat(300) } } });
    mutations.push({ kind: 'odd string', label: 'header x-idempotency-key: empty', request: { ...clone(base), headers: { ...base.headers, 'x-idempotency-key': '' } } });
  }
  return mutations;
}

/**
 * `count` of the mutations (all of them when 0), taken a kind at a time in turn so that every kind
 * is tried before any is tried twice; within a kind, at random. Deep nesting comes first: it once
 * broke every operation with a body.
 */
export function sampleByKind(mutations: Mutation[], count: number, random: SeededRandom): Mutation[] {
  if (count === 0 || mutations.length <= count) return mutations;
  const byKind = new Map<string, Mutation[]>();
  for (const mutation of mutations) byKind.set(mutation.kind, [...(byKind.get(mutation.kind) ?? []), mutation]);
  const shuffled = [...byKind.keys()].filter((kind) => kind !== 'deep nesting');
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = random.below(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  const kinds = [...(byKind.has('deep nesting') ? ['deep nesting'] : []), ...shuffled];
  const taken: Mutation[] = [];
  while (taken.length < count) {
    for (const kind of kinds) {
      const left = byKind.get(kind)!;
      if (left.length === 0 || taken.length === count) continue;
      taken.push(left.splice(random.below(left.length), 1)[0]);
    }
  }
  return taken;
}
