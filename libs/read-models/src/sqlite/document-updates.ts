import { randomUUID } from 'node:crypto';
import { updateMany, type Modifier } from 'mingo/updater';
import type { Document, Filter, Update } from '../read-model-store.port';
import { applyPlainUpdate } from './plain-update';

/**
 * MongoDB's update rules over plain documents. mingo applies the update operators; what mingo
 * lacks is here: replacement documents, $setOnInsert, and the document an upsert inserts.
 */

/** An update document without any `$` operator replaces the matched document. */
export function isReplacement(update: Update): boolean {
  return Object.keys(update).every((key) => !key.startsWith('$'));
}

/**
 * The matched documents after `update` ($setOnInsert only applies to upserts, so it is dropped),
 * and whether they may now hold values of `update` itself (a replacement, or what mingo applied;
 * the plain operators copy what they set).
 */
export function applyUpdate(docs: Document[], update: Update): { docs: Document[]; sharesValues: boolean } {
  if (isReplacement(update)) return { docs: docs.map((doc) => replaceDocument(doc, update)), sharesValues: true };
  const { $setOnInsert: _onInsertOnly, ...operators } = update;
  if (docs.length === 0 || Object.keys(operators).length === 0) return { docs, sharesValues: false };
  // The plain operators directly; else one mingo call for all documents (the modifier compiled once, documents changed in place).
  const rest = docs.filter((doc) => !applyPlainUpdate(doc, operators));
  if (rest.length > 0) updateMany(rest, {}, operators as Modifier<Document>);
  return { docs, sharesValues: rest.length > 0 };
}

/** `replacement` in place of `existing`; like MongoDB, the `_id` cannot change. */
export function replaceDocument(existing: Document, replacement: Record<string, unknown>): Document {
  if (replacement._id !== undefined && replacement._id !== existing._id) {
    throw new Error(`replacement would change the immutable _id of ${existing._id}`);
  }
  return { ...replacement, _id: existing._id };
}

/**
 * The document an upsert inserts when nothing matches, as MongoDB builds it: the filter's
 * equality fields, then the update (a replacement keeps only the filter's `_id`), then $setOnInsert.
 */
export function upsertedDocument(filter: Filter, update: Update): Document {
  const { _id: filterId, ...equalities } = equalityFields(filter);
  if (isReplacement(update)) return { ...update, _id: (filterId ?? update._id ?? randomUUID()) as string };

  const doc: Document = { _id: (filterId ?? randomUUID()) as string };
  const { $setOnInsert, ...operators } = update;
  if (Object.keys(equalities).length > 0) applyUpdate([doc], { $set: equalities });
  applyUpdate([doc], operators);
  if ($setOnInsert) applyUpdate([doc], { $set: $setOnInsert });
  return doc;
}

/** Fields a filter pins to one value: `{a: 1}`, `{a: {$eq: 1}}`, and those inside a top-level $and. */
export function equalityFields(filter: Filter): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value)) Object.assign(fields, ...value.map((part: Filter) => equalityFields(part)));
    else if (key.startsWith('$')) continue;
    else if (!isOperatorObject(value)) fields[key] = value;
    else if ('$eq' in value) fields[key] = value.$eq;
  }
  return fields;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}
