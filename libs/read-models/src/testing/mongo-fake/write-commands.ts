import { ObjectId, type Document } from 'bson';
import { Query, update as applyUpdateOperators } from 'mingo';
import { cloneDocument, sameDocument, valueKey } from './bson-values';

/**
 * The insert, update and delete commands over one collection's documents (modified in place),
 * answered like the server: counts, `upserted`, and per-statement `writeErrors` (ordered batches
 * stop at the first error). Only `_id` is unique here: other unique indexes are not enforced.
 */
export interface WriteError {
  index: number;
  code: number;
  errmsg: string;
  keyPattern?: Document;
  keyValue?: Document;
}

export interface UpdateStatement {
  q: Document;
  u: Document;
  upsert?: boolean;
  multi?: boolean;
}

export interface DeleteStatement {
  q: Document;
  limit: number;
}

export function insertDocuments(namespace: string, collection: Document[], documents: Document[], ordered = true) {
  const writeErrors: WriteError[] = [];
  let n = 0;
  for (const [index, document] of documents.entries()) {
    const stored = document._id === undefined ? { _id: new ObjectId(), ...document } : document;
    if (findById(collection, stored._id)) {
      writeErrors.push(duplicateKey(index, namespace, stored._id));
      if (ordered) break;
      continue;
    }
    collection.push(stored);
    n++;
  }
  return withWriteErrors({ n }, writeErrors);
}

export function updateDocuments(namespace: string, collection: Document[], statements: UpdateStatement[], ordered = true) {
  const writeErrors: WriteError[] = [];
  const upserted: { index: number; _id: unknown }[] = [];
  let n = 0;
  let nModified = 0;
  for (const [index, { q, u, upsert, multi }] of statements.entries()) {
    try {
      const query = new Query(q);
      const matches = collection.filter((document) => query.test(document));
      for (const current of multi ? matches : matches.slice(0, 1)) {
        const next = updated(current, u);
        n++;
        if (sameDocument(current, next)) continue;
        collection[collection.indexOf(current)] = next;
        nModified++;
      }
      if (matches.length === 0 && upsert) {
        const inserted = upsertedDocument(q, u);
        if (findById(collection, inserted._id)) throw duplicateKey(index, namespace, inserted._id);
        collection.push(inserted);
        upserted.push({ index, _id: inserted._id });
        n++;
      }
    } catch (error) {
      writeErrors.push(isWriteError(error) ? error : { index, code: BAD_VALUE, errmsg: (error as Error).message });
      if (ordered) break;
    }
  }
  return withWriteErrors({ n, nModified, ...(upserted.length ? { upserted } : {}) }, writeErrors);
}

export function deleteDocuments(collection: Document[], statements: DeleteStatement[]) {
  let n = 0;
  for (const { q, limit } of statements) {
    const query = new Query(q);
    const matches = collection.filter((document) => query.test(document));
    for (const document of limit === 1 ? matches.slice(0, 1) : matches) {
      collection.splice(collection.indexOf(document), 1);
      n++;
    }
  }
  return { n };
}

const BAD_VALUE = 2;

/** An update document without operators replaces the whole document (keeping its _id). */
function isReplacement(update: Document): boolean {
  return !Object.keys(update).some((key) => key.startsWith('$'));
}

function updated(current: Document, update: Document): Document {
  if (isReplacement(update)) {
    if (update._id !== undefined && valueKey(update._id) !== valueKey(current._id)) {
      throw new Error("Performing an update on the path '_id' would modify the immutable field '_id'");
    }
    return { ...update, _id: current._id };
  }
  const next = cloneDocument(current);
  const { $setOnInsert: _onInsertOnly, ...operators } = update;
  applyOperators(next, operators);
  return next;
}

/** The document an upsert inserts: the filter's equality fields, then the update (with $setOnInsert). */
function upsertedDocument(filter: Document, update: Document): Document {
  const { _id = new ObjectId(), ...seed } = equalityFields(filter);
  if (isReplacement(update)) return { _id, ...update };
  const document: Document = {};
  applyOperators(document, { $set: seed });
  const { $setOnInsert, $set, ...operators } = update;
  applyOperators(document, { ...operators, $set: { ...$set, ...$setOnInsert } });
  return { _id, ...document };
}

/** mingo's update operators, after the argument checks the server makes and mingo does not. */
function applyOperators(document: Document, operators: Document): void {
  for (const operator of ['$inc', '$mul']) {
    for (const [path, amount] of Object.entries(operators[operator] ?? {})) {
      const current = path.split('.').reduce<any>((value, key) => value?.[key], document);
      if (typeof amount !== 'number' || (current !== undefined && typeof current !== 'number')) {
        throw new Error(`Cannot apply ${operator} with ${JSON.stringify(amount)} to ${JSON.stringify(current)} at '${path}'`);
      }
    }
  }
  applyUpdateOperators(document, operators);
}

function equalityFields(filter: Document): Document {
  const fields: Document = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and') Object.assign(fields, ...(value as Document[]).map(equalityFields));
    else if (key.startsWith('$')) continue;
    else if (!isOperatorObject(value)) fields[key] = value;
    else if ('$eq' in value) fields[key] = value.$eq;
  }
  return fields;
}

function isOperatorObject(value: unknown): value is Document {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    Object.keys(value).some((key) => key.startsWith('$'))
  );
}

function findById(collection: Document[], id: unknown): Document | undefined {
  const key = valueKey(id);
  return collection.find((document) => valueKey(document._id) === key);
}

function duplicateKey(index: number, namespace: string, id: unknown): WriteError {
  return {
    index,
    code: 11000,
    errmsg: `E11000 duplicate key error collection: ${namespace} index: _id_ dup key: { _id: ${JSON.stringify(id)} }`,
    keyPattern: { _id: 1 },
    keyValue: { _id: id },
  };
}

function isWriteError(error: unknown): error is WriteError {
  return typeof error === 'object' && error !== null && 'code' in error && 'index' in error;
}

function withWriteErrors<T extends Document>(reply: T, writeErrors: WriteError[]): T {
  return writeErrors.length ? { ...reply, writeErrors } : reply;
}
