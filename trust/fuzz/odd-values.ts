import fc from 'fast-check';
import type { JsonSchema } from '../support/openapi-operations';
import { typesOf } from '../support/openapi-operations';

/** A value the fuzzer puts somewhere, and what it is (printed with a failure). */
export interface OddValue {
  label: string;
  value: unknown;
}

const MIB = 1024 * 1024;

/** Strings that have broken servers before: each is tried on every string field, path and query parameter. */
const NAMED_STRINGS: OddValue[] = [
  { label: 'empty string', value: '' },
  { label: 'blanks', value: '   ' },
  { label: 'NUL byte', value: 'a\0b' },
  { label: 'only NUL', value: '\0' },
  { label: 'lone high surrogate', value: 'x\uD800y' },
  { label: 'lone low surrogate', value: '\uDFFF' },
  { label: 'byte order mark', value: '\uFEFFname' },
  { label: 'right-to-left override', value: 'abc\u202Etxt.exe' },
  { label: 'zero-width joiners', value: 'a\u200D\u200B\u200Cb' },
  { label: 'a thousand combining marks', value: `e${'\u0301'.repeat(1000)}` },
  { label: 'emoji sequence', value: '👩‍👩‍👧‍👦🏳️‍🌈' },
  { label: 'line breaks and escapes', value: 'a\r\nb\n\t\x1b[31mc\x7f' },
  { label: 'path traversal', value: '../../../../etc/passwd' },
  { label: 'encoded traversal', value: '%2e%2e%2f%2e%2e%2fetc%2fpasswd' },
  { label: 'prototype key', value: '__proto__' },
  { label: 'operator object text', value: '{"$gt":""}' },
  { label: 'format directives', value: '%s%n%x%d' },
  { label: 'numeric text', value: '1e309' },
  { label: 'megabyte string', value: 'x'.repeat(MIB) },
];

/** Random strings, each run its own (seeded): any code point, NUL included, sometimes huge. */
const randomString: fc.Arbitrary<OddValue> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }).map((value) => ({ label: `random code points ${JSON.stringify(value)}`, value })),
  fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 32 }).map((value) => ({ label: `random graphemes ${JSON.stringify(value)}`, value })),
  fc
    .tuple(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }))
    .map(([a, b]) => ({ label: `NUL inside ${JSON.stringify(a + '\0' + b)}`, value: `${a}\0${b}` })),
  fc
    .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.integer({ min: 64 * 1024, max: 2 * MIB }))
    .map(([unit, length]) => ({ label: `${length}-character repetition of ${JSON.stringify(unit)}`, value: unit.repeat(Math.ceil(length / unit.length)).slice(0, length) })),
);

/** `count` random odd strings, from the seed. */
export function randomStrings(seed: number, count: number): OddValue[] {
  return count === 0 ? [] : fc.sample(randomString, { seed, numRuns: count });
}

/** The named odd strings (all, or `count` of them chosen by the seed). */
export function namedStrings(seed: number, count = NAMED_STRINGS.length): OddValue[] {
  if (count >= NAMED_STRINGS.length) return NAMED_STRINGS;
  return fc.sample(fc.shuffledSubarray(NAMED_STRINGS, { minLength: count, maxLength: count }), { seed, numRuns: 1 })[0];
}

/** Ids that are not UUIDs, or UUIDs of nothing. */
export function badUuids(seed: number): OddValue[] {
  const [random] = fc.sample(fc.uuid(), { seed, numRuns: 1 });
  return [
    { label: 'a UUID of nothing', value: random },
    { label: 'the nil UUID', value: '00000000-0000-0000-0000-000000000000' },
    { label: 'not a UUID', value: 'not-a-uuid' },
    { label: 'a UUID cut short', value: random.slice(0, 35) },
    { label: 'a UUID too long', value: `${random}0` },
    { label: 'a UUID in braces', value: `{${random}}` },
    { label: 'a UUID of z', value: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz' },
    { label: 'a UUID and a NUL', value: `${random}\0` },
  ];
}

/** Values of every JSON type the schema does not take, and numbers outside its range. */
export function wrongTypes(schema: JsonSchema): OddValue[] {
  const types = typesOf(schema);
  const values: OddValue[] = [];
  const add = (type: string, label: string, value: unknown) => {
    const allowed = types.includes(type) || (type === 'integer' && types.includes('number'));
    if (!allowed) values.push({ label, value });
  };
  add('string', 'a string', 'seven');
  add('integer', 'an integer', 7);
  add('number', 'a fraction', 1.5);
  add('boolean', 'a boolean', true);
  add('null', 'null', null);
  add('array', 'an array', ['x', 1]);
  add('object', 'an object', { x: 1 });
  if (types.includes('integer') || types.includes('number')) {
    values.push({ label: 'a negative number', value: -1 });
    values.push({ label: 'a number past 2^53', value: 2 ** 64 });
    values.push({ label: 'a huge number', value: 1e308 });
    if (typeof schema.minimum === 'number') values.push({ label: 'one below the minimum', value: schema.minimum - 1 });
    if (typeof schema.maximum === 'number') values.push({ label: 'one above the maximum', value: schema.maximum + 1 });
  }
  if (schema.enum) values.push({ label: 'a value outside the enum', value: `${String(schema.enum[0])}x` });
  return values;
}

/** Query-string values that are not what a typed parameter takes (a query string is all text). */
export function wrongQueryValues(schema: JsonSchema): OddValue[] {
  const types = typesOf(schema);
  const values: OddValue[] = [
    { label: 'text', value: 'seven' },
    { label: 'empty', value: '' },
  ];
  if (types.includes('integer') || types.includes('number')) {
    values.push({ label: 'negative', value: '-1' }, { label: 'fraction', value: '1.5' }, { label: 'past 2^64', value: '18446744073709551617' }, { label: 'exponent', value: '1e400' });
    if (typeof schema.maximum === 'number') values.push({ label: 'one above the maximum', value: String(schema.maximum + 1) });
  }
  if (types.includes('boolean')) values.push({ label: 'a boolean in capitals', value: 'TRUE' }, { label: 'a number for a boolean', value: '1' });
  if (schema.format === 'uuid') values.push({ label: 'not a UUID', value: 'not-a-uuid' });
  return values;
}
